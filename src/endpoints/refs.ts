import { z } from 'zod';
import { UserError } from '../util/errors.ts';

/**
 * Model references as users write them:
 *   local:DIR                                  the embedded engine over an organism folder
 *   vllm:URL[,URL...]#MODEL                    a vLLM server (replicas: several URLs serving one model)
 *   hf:MODEL                                   Hugging Face Inference Providers
 *   hf-endpoint:URL#MODEL                      a dedicated (TGI/vLLM) endpoint spoken to with @huggingface/inference
 * A URL may carry credentials (`http://user:key@host`); they never leave this module unredacted.
 */
export type ModelRef =
  | { kind: 'local'; dir: string; ref: string }
  | { kind: 'vllm'; urls: string[]; model: string; ref: string }
  | { kind: 'hf'; model: string; ref: string }
  | { kind: 'hf-endpoint'; url: string; model: string; ref: string };

const httpUrl = z
  .string()
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'expected an http(s) URL')
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.username === '' && u.password === '';
    } catch {
      return true; // already reported as not a URL
    }
  }, 'credentials in a URL are not accepted; name an environment variable with --api-key-env')
  .refine((s) => {
    try {
      return new URL(s).search === '';
    } catch {
      return true;
    }
  }, 'a query string (?token=…) is never sent; name the environment variable holding a key with --api-key-env')
  .transform((s) => s.replace(/\/+$/, ''));

const modelName = (after: string) =>
  z
    .string()
    .min(1, `expected a model name after ${after}`)
    .regex(/^[^\s#,]+$/, 'model name must not contain spaces, # or ,');

const refSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('local'), dir: z.string().min(1, 'expected a directory after local:') }),
  z.object({ kind: z.literal('vllm'), urls: z.array(httpUrl).min(1), model: modelName('#') }),
  z.object({ kind: z.literal('hf'), model: modelName('hf:') }),
  z.object({ kind: z.literal('hf-endpoint'), url: httpUrl, model: modelName('#') }),
]);

const FORMS = 'local:DIR, vllm:URL[,URL...]#MODEL, hf:MODEL or hf-endpoint:URL#MODEL';

/** Parses a model reference; a bad one is a one-line UserError naming `where` (a flag or config field). */
export function parseModelRef(input: string, where = 'model reference'): ModelRef {
  const text = input.trim();
  const colon = text.indexOf(':');
  const scheme = colon > 0 ? text.slice(0, colon) : '';
  const rest = colon > 0 ? text.slice(colon + 1) : '';
  let candidate: unknown;
  const splitModel = (s: string): [string, string] => {
    const hash = s.lastIndexOf('#');
    return hash < 0 ? [s, ''] : [s.slice(0, hash), s.slice(hash + 1)];
  };
  switch (scheme) {
    case 'local':
      candidate = { kind: 'local', dir: rest };
      break;
    case 'vllm': {
      const [urls, model] = splitModel(rest);
      candidate = { kind: 'vllm', urls: urls.split(',').map((u) => u.trim()), model };
      break;
    }
    case 'hf':
      candidate = { kind: 'hf', model: rest };
      break;
    case 'hf-endpoint': {
      const [url, model] = splitModel(rest);
      candidate = { kind: 'hf-endpoint', url, model };
      break;
    }
    default:
      throw new UserError(`${where}: "${redactText(text)}" is not a model reference (expected ${FORMS})`);
  }
  const parsed = refSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.filter((p) => typeof p === 'string').join('.') || scheme;
    throw new UserError(
      `${where}: "${redactText(text)}": ${field}: ${issue?.message ?? 'invalid'} (expected ${FORMS})`,
    );
  }
  const value = parsed.data;
  const ref = redactRef(value);
  return { ...value, ref } as ModelRef;
}

/** The reference as it may appear in identities, ledgers and reports: URL credentials and query removed. */
function redactRef(value: z.infer<typeof refSchema>): string {
  switch (value.kind) {
    case 'local':
      return `local:${value.dir}`;
    case 'vllm':
      return `vllm:${value.urls.map(redactUrl).join(',')}#${value.model}`;
    case 'hf':
      return `hf:${value.model}`;
    case 'hf-endpoint':
      return `hf-endpoint:${redactUrl(value.url)}#${value.model}`;
  }
}

/** Drops userinfo and query string (where keys hide) from a URL. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString().replace(/\/+$/, '');
  } catch {
    return '[invalid url]';
  }
}

/** Redacts anything URL-shaped inside free text (used before echoing user input in an error). */
export function redactText(text: string): string {
  return text.replace(/https?:\/\/[^\s,#]+/g, (m) => redactUrl(m));
}

/**
 * Removes every occurrence of each secret from a message. Applied to every error message and identity
 * that may carry server-echoed text.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out;
}
