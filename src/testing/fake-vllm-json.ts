import { randomBytes } from 'node:crypto';
import { decodeToken, tokenLogprob } from './fake-vllm-model.ts';

/**
 * Fast JSON for the fake server's largest replies, byte for byte what JSON.stringify of the same objects
 * gives (test/testing/fake-vllm-json.test.ts). A prompt_logprobs reply is one object per prompt token; built
 * and stringified per request it made the benchmark's "zero-latency" server, not the client, the limit of
 * the audit path. Each token's entry is rendered once and reused.
 */
const promptEntryText = new Map<number, string>();
const chatEntryText = new Map<number, string>();

/** `[null, {"id": {logprob, rank: 1, decoded_token}}, ...]`: vLLM's prompt_logprobs for these prompt ids. */
export function promptLogprobsText(ids: readonly number[]): string {
  const parts = new Array<string>(ids.length);
  for (let i = 0; i < ids.length; i++) {
    if (i === 0) {
      parts[i] = 'null';
      continue;
    }
    const id = ids[i]!;
    let text = promptEntryText.get(id);
    if (text === undefined) {
      text = JSON.stringify({
        [String(id)]: { logprob: tokenLogprob(id), rank: 1, decoded_token: decodeToken(id) },
      });
      promptEntryText.set(id, text);
    }
    parts[i] = text;
  }
  return `[${parts.join(',')}]`;
}

/** A chat reply's `logprobs.content` without alternatives (`top_logprobs: 0`). */
export function chatLogprobsText(ids: readonly number[]): string {
  const parts = new Array<string>(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    let text = chatEntryText.get(id);
    if (text === undefined) {
      text = JSON.stringify({
        token: decodeToken(id),
        logprob: tokenLogprob(id),
        bytes: [id],
        top_logprobs: [],
      });
      chatEntryText.set(id, text);
    }
    parts[i] = text;
  }
  return `[${parts.join(',')}]`;
}

/**
 * JSON.stringify with pre-rendered JSON spliced in: a value given as `raw.put(text)` is a placeholder
 * string (with a per-process nonce no reply text can contain) that is replaced by `text` verbatim.
 */
export class RawJson {
  private static readonly nonce = randomBytes(8).toString('hex');
  private readonly texts: string[] = [];

  put(text: string): string {
    this.texts.push(text);
    return `\u0000raw:${RawJson.nonce}:${this.texts.length - 1}\u0000`;
  }

  stringify(value: unknown): string {
    const out = JSON.stringify(value);
    if (this.texts.length === 0) return out;
    const quoted = /"\\u0000raw:([0-9a-f]{16}):(\d+)\\u0000"/g;
    return out.replace(quoted, (whole, nonce: string, i: string) =>
      nonce === RawJson.nonce ? this.texts[Number(i)]! : whole,
    );
  }
}
