import { resolve } from 'node:path';
import { UserError } from '../../util/errors.ts';
import type { ChatMessage } from '../types.ts';
import { type HfTokenizer, loadHfTokenizer } from './hf-tokenizer.ts';

export interface ChatRenderOptions {
  addGenerationPrompt?: boolean;
  continueFinalMessage?: boolean;
  kwargs?: Record<string, unknown>;
}

/** GPT-2's reversible byte → printable-character table, inverted: how ByteLevel vocabularies spell bytes. */
function byteLevelDecoder(): Map<string, number> {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const map = new Map<string, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const code = printable.includes(b) ? b : 256 + extra++;
    map.set(String.fromCodePoint(code), b);
  }
  return map;
}

const utf8 = new TextEncoder();

/** Tokenizer + chat template of a local model folder, read from its tokenizer.json / tokenizer_config.json. */
export class LocalTokenizer {
  readonly specialIds: ReadonlySet<number>;
  private readonly byteLevel: Map<string, number> | undefined;
  private readonly bytesCache = new Map<number, Uint8Array>();

  private constructor(
    private readonly tok: HfTokenizer,
    readonly dir: string,
  ) {
    this.specialIds = new Set(tok.all_special_ids);
    const decoder = tok._tokenizerJSON.decoder;
    const types = [decoder?.type, ...(decoder?.decoders ?? []).map((d) => d.type)];
    this.byteLevel = types.includes('ByteLevel') ? byteLevelDecoder() : undefined;
  }

  static async load(dir: string): Promise<LocalTokenizer> {
    // An absolute path: transformers.js takes a bare relative path for a Hub id.
    const abs = resolve(dir);
    let tok: HfTokenizer;
    try {
      tok = await loadHfTokenizer(abs);
    } catch (err) {
      throw new UserError(
        `${dir}/tokenizer.json: cannot load tokenizer: ${(err as Error).message.split('\n')[0]}`,
      );
    }
    return new LocalTokenizer(tok, dir);
  }

  get hasChatTemplate(): boolean {
    return Boolean(this.tok.chat_template);
  }

  encode(text: string, addSpecialTokens: boolean): number[] {
    return text === '' ? [] : this.tok.encode(text, { add_special_tokens: addSpecialTokens });
  }

  /** Decodes a whole sequence (never join per-token decodes: byte tokens may split a character). */
  decode(ids: number[], skipSpecialTokens = true): string {
    return ids.length === 0 ? '' : this.tok.decode(ids, { skip_special_tokens: skipSpecialTokens });
  }

  /** The token as text on its own (may be "�" for a partial UTF-8 character). */
  tokenText(id: number): string {
    return this.tok.decode([id], { skip_special_tokens: false });
  }

  /** The exact bytes a token stands for (a partial character for split UTF-8). */
  tokenBytes(id: number): Uint8Array {
    let bytes = this.bytesCache.get(id);
    if (!bytes) {
      bytes = this.computeTokenBytes(id);
      this.bytesCache.set(id, bytes);
    }
    return bytes;
  }

  private computeTokenBytes(id: number): Uint8Array {
    const piece = this.tok._tokenizer.id_to_token(id);
    if (piece === undefined || this.specialIds.has(id)) return utf8.encode(piece ?? '');
    if (this.byteLevel) {
      const bytes = [...piece].map((ch) => this.byteLevel!.get(ch));
      if (bytes.every((b) => b !== undefined)) return Uint8Array.from(bytes as number[]);
    }
    const fallback = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
    if (fallback) return Uint8Array.of(Number.parseInt(fallback[1]!, 16));
    return utf8.encode(this.tokenText(id));
  }

  /**
   * Renders a conversation with the model's chat template. `continueFinalMessage` cuts the render right after
   * the last message's content (found through a sentinel, so an empty prefill works too), so the model
   * continues that turn as Hugging Face's apply_chat_template does.
   */
  renderChat(messages: ChatMessage[], opts: ChatRenderOptions = {}): string {
    if (!this.hasChatTemplate)
      throw new UserError(`${this.dir}/tokenizer_config.json: missing chat_template`);
    const last = messages.at(-1);
    const cut = opts.continueFinalMessage && last ? CUT : '';
    const input =
      cut && last ? [...messages.slice(0, -1), { ...last, content: last.content + cut }] : messages;
    const rendered = this.tok.apply_chat_template(input, {
      ...opts.kwargs,
      tokenize: false,
      add_generation_prompt: Boolean(opts.addGenerationPrompt) && !cut,
    });
    if (!cut) return rendered;
    const at = rendered.lastIndexOf(cut);
    if (at < 0)
      throw new UserError(`${this.dir}/tokenizer_config.json: chat_template drops the final message`);
    return rendered.slice(0, at);
  }
}

/** Marks the end of the final message in a render; no template produces it by itself. */
const CUT = '\u0000probate-continue\u0000';
