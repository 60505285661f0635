import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import type { ChatMessage } from '../types.ts';

/** The parts of transformers.js' tokenizer the engine uses (its own typings hide `_tokenizer`). */
export interface HfTokenizer {
  encode(text: string, opts: { add_special_tokens: boolean }): number[];
  decode(ids: number[], opts: { skip_special_tokens: boolean }): string;
  apply_chat_template(messages: ChatMessage[], opts: Record<string, unknown>): string;
  all_special_ids: number[];
  chat_template: unknown;
  _tokenizerJSON: { decoder?: { type?: string; decoders?: { type?: string }[] } | null };
  _tokenizer: { id_to_token(id: number): string | undefined };
}

/**
 * tokenizer_class values transformers.js maps to its base PreTrainedTokenizer with no overrides: for these
 * the light tokenizer below behaves identically. Any other class loads through transformers.js itself.
 */
const BASE_CLASSES = new Set([undefined, 'PreTrainedTokenizer', 'GPT2Tokenizer']);

const SPECIAL_TOKEN_ATTRIBUTES = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
];

type Config = Record<string, unknown>;

/** As transformers.js reads a special token from tokenizer_config.json (a string or an AddedToken object). */
function tokenFromConfig(config: Config, key: string): string | undefined {
  const item = config[key];
  if (!item) return undefined;
  if (typeof item === 'object' && (item as { __type?: string }).__type === 'AddedToken') {
    return (item as { content: string }).content;
  }
  return typeof item === 'string' ? item : undefined;
}

/**
 * transformers.js' PreTrainedTokenizer (encode, decode, apply_chat_template) rebuilt on the two packages it
 * wraps, @huggingface/tokenizers and @huggingface/jinja: importing transformers.js itself costs seconds of
 * CPU (it pulls in sharp and onnxruntime-web) that a tokenizer does not need.
 */
class LightTokenizer implements HfTokenizer {
  readonly _tokenizer: Tokenizer;
  readonly all_special_ids: number[];
  readonly chat_template: unknown;
  private readonly templates = new Map<string, Template>();

  constructor(
    readonly _tokenizerJSON: HfTokenizer['_tokenizerJSON'],
    private readonly config: Config,
  ) {
    this._tokenizer = new Tokenizer(_tokenizerJSON, config);
    this.all_special_ids = [...this._tokenizer.get_added_tokens_decoder().entries()]
      .filter(([, t]) => t.special)
      .map(([id]) => id);
    const template = config.chat_template ?? null;
    this.chat_template = Array.isArray(template)
      ? Object.fromEntries(template.map((t: { name: string; template: string }) => [t.name, t.template]))
      : template;
  }

  encode(text: string, opts: { add_special_tokens: boolean }): number[] {
    return this._tokenizer.encode(text, { add_special_tokens: opts.add_special_tokens }).ids;
  }

  decode(ids: number[], opts: { skip_special_tokens: boolean }): string {
    return this._tokenizer.decode(ids, { skip_special_tokens: opts.skip_special_tokens });
  }

  apply_chat_template(messages: ChatMessage[], opts: Record<string, unknown>): string {
    const { add_generation_prompt = false, tokenize: _tokenize, ...kwargs } = opts;
    let source = this.chat_template;
    if (source && typeof source === 'object') source = (source as Record<string, unknown>).default;
    if (typeof source !== 'string') throw new Error('chat_template must be a string (or have a default)');
    let template = this.templates.get(source);
    if (!template) {
      template = new Template(source);
      this.templates.set(source, template);
    }
    const special: Record<string, string> = {};
    for (const key of SPECIAL_TOKEN_ATTRIBUTES) {
      const value = tokenFromConfig(this.config, key);
      if (value) special[key] = value;
    }
    return template.render({
      messages,
      add_generation_prompt,
      tools: null,
      documents: null,
      ...special,
      ...kwargs,
    });
  }
}

/** Loads a folder's tokenizer: the light one where it is exact, else transformers.js' AutoTokenizer. */
export async function loadHfTokenizer(dir: string): Promise<HfTokenizer> {
  const [json, config] = await Promise.all(
    ['tokenizer.json', 'tokenizer_config.json'].map(
      async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as Config,
    ),
  );
  const cls = (config!.tokenizer_class as string | undefined)?.replace(/Fast$/, '');
  if (BASE_CLASSES.has(cls)) return new LightTokenizer(json as HfTokenizer['_tokenizerJSON'], config!);
  const { AutoTokenizer } = await import('@huggingface/transformers');
  return (await AutoTokenizer.from_pretrained(dir, { local_files_only: true })) as unknown as HfTokenizer;
}
