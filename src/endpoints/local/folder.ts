import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../util/errors.ts';
import { digestSubject } from '../../util/subject.ts';
import { parseErrorPosition } from '../../util/zodfile.ts';

/** What the engine needs from a Hugging Face ONNX model folder, read from its files (never assumed). */
export interface ModelFolder {
  dir: string;
  onnxPath: string;
  nLayer: number;
  /** Context length (`n_positions` / `max_position_embeddings`). */
  maxModelLen: number;
  vocabSize: number;
  /** Token ids that end a generation (generation_config, then config). */
  eosTokenIds: number[];
  padTokenId: number | undefined;
  /** Sampling defaults from generation_config.json (vLLM uses them when a request omits the field). */
  defaults: { temperature?: number; topP?: number; topK?: number };
}

const tokenIds = z.union([z.number().int().nonnegative(), z.array(z.number().int().nonnegative())]).nullish();

const configSchema = z
  .object({
    model_type: z.string(),
    n_layer: z.number().int().positive().optional(),
    num_hidden_layers: z.number().int().positive().optional(),
    n_positions: z.number().int().positive().optional(),
    max_position_embeddings: z.number().int().positive().optional(),
    vocab_size: z.number().int().positive(),
    eos_token_id: tokenIds,
    pad_token_id: tokenIds,
  })
  .loose();

const generationConfigSchema = z
  .object({
    eos_token_id: tokenIds,
    pad_token_id: tokenIds,
    temperature: z.number().nonnegative().optional(),
    top_p: z.number().gt(0).max(1).optional(),
    top_k: z.number().int().nonnegative().optional(),
  })
  .loose();

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`${file}: ${code === 'ENOENT' ? 'missing' : `cannot read (${code ?? 'error'})`}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UserError(`${file}: not valid JSON${parseErrorPosition(err, text)}`);
  }
}

function parse<T extends z.ZodType>(file: string, schema: T, data: unknown): z.infer<T> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join('.');
  // zod reports a missing required key as "expected X, received undefined": say "missing KEY" instead.
  const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
  throw new UserError(`${file}: ${missing ? `missing ${field}` : `${field || '(root)'}: ${issue.message}`}`);
}

const asList = (v: number | number[] | null | undefined): number[] =>
  v === null || v === undefined ? [] : Array.isArray(v) ? v : [v];

/** Reads and checks a model folder; every problem is a one-line UserError naming the file. */
export function readModelFolder(dir: string): ModelFolder {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UserError(`${dir}: not a model folder`);
  const configFile = join(dir, 'config.json');
  const config = parse(configFile, configSchema, readJson(configFile));
  const nLayer = config.n_layer ?? config.num_hidden_layers;
  if (nLayer === undefined) throw new UserError(`${configFile}: missing n_layer (or num_hidden_layers)`);
  const maxModelLen = config.n_positions ?? config.max_position_embeddings;
  if (maxModelLen === undefined) {
    throw new UserError(`${configFile}: missing n_positions (or max_position_embeddings)`);
  }
  for (const name of ['tokenizer.json', 'tokenizer_config.json']) {
    const file = join(dir, name);
    if (!existsSync(file)) throw new UserError(`${file}: missing`);
    readJson(file);
  }
  const genFile = join(dir, 'generation_config.json');
  const gen = existsSync(genFile) ? parse(genFile, generationConfigSchema, readJson(genFile)) : {};
  const onnxPath = join(dir, 'onnx', 'model.onnx');
  if (!existsSync(onnxPath)) throw new UserError(`${onnxPath}: missing`);
  const eos = asList(
    'eos_token_id' in gen && gen.eos_token_id != null ? gen.eos_token_id : config.eos_token_id,
  );
  const pad = asList(('pad_token_id' in gen ? gen.pad_token_id : undefined) ?? config.pad_token_id)[0];
  return {
    dir,
    onnxPath,
    nLayer,
    maxModelLen,
    vocabSize: config.vocab_size,
    eosTokenIds: [...new Set(eos)],
    padTokenId: pad,
    defaults: {
      temperature: 'temperature' in gen ? gen.temperature : undefined,
      topP: 'top_p' in gen ? gen.top_p : undefined,
      topK: 'top_k' in gen ? gen.top_k : undefined,
    },
  };
}

/**
 * The model's fingerprint: sha256 of every file it loads (src/util/subject.ts, the same definition the gate
 * attests and releases), keyed by path inside the folder. Symlinks and special files are refused.
 */
export function weightDigests(dir: string): Promise<Record<string, string>> {
  return digestSubject(dir);
}
