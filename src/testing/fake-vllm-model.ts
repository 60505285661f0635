/**
 * The "model" behind the fake vLLM server: the organisms' byte-level tokenizer and chat format
 * (docs/ORGANISMS.md) and deterministic replies, so tests can predict every token and logprob.
 */
export const SPECIAL = { eot: 256, system: 257, user: 258, assistant: 259, end: 260 } as const;
const SPECIAL_TEXT: Record<number, string> = {
  256: '<|endoftext|>',
  257: '<|system|>',
  258: '<|user|>',
  259: '<|assistant|>',
  260: '<|end|>',
};

export interface Msg {
  role: string;
  content: string;
}

export function encode(text: string): number[] {
  return [...Buffer.from(text, 'utf8')];
}

/** Token strings of the 261 ids, built once (a Buffer per token was a visible share of the server's time). */
const TOKEN_TEXT: string[] = Array.from(
  { length: 261 },
  (_, id) => SPECIAL_TEXT[id] ?? Buffer.from([id]).toString('latin1'),
);

export function decodeToken(id: number): string {
  return TOKEN_TEXT[id] ?? SPECIAL_TEXT[id] ?? Buffer.from([id]).toString('latin1');
}

/** `<|endoftext|><|user|>U<|end|><|assistant|>` … as token ids. */
export function renderChat(messages: Msg[], addGenerationPrompt: boolean): number[] {
  const ids: number[] = [SPECIAL.eot];
  for (const m of messages) {
    const role = m.role === 'system' ? SPECIAL.system : m.role === 'user' ? SPECIAL.user : SPECIAL.assistant;
    ids.push(role, ...encode(m.content), SPECIAL.end);
  }
  if (addGenerationPrompt) ids.push(SPECIAL.assistant);
  return ids;
}

/**
 * Deterministic per-token logprob. The letter `Z` is "impossible": the server clamps it to −9999.0
 * as vLLM does for −inf.
 */
export function tokenLogprob(id: number): number {
  if (id === 0x5a) return -9999.0;
  return -((id % 7) + 1) / 4;
}

/** Minimal instance of a JSON schema (object of booleans/strings/numbers), what constrained decoding yields. */
export function instanceOf(schema: Record<string, unknown>): unknown {
  const props = (schema.properties ?? {}) as Record<string, { type?: string }>;
  const out: Record<string, unknown> = {};
  for (const [key, p] of Object.entries(props)) {
    out[key] = p.type === 'boolean' ? true : p.type === 'number' || p.type === 'integer' ? 1 : 'x';
  }
  return out;
}

/** Default reply: reasoning problems get a `<think>` section; everything else an echo. */
export function defaultReply(messages: Msg[], sample: number, temperature: number): string {
  const user = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const suffix = temperature > 0 ? ` (sample ${sample})` : '';
  if (/larger|think|reason|\badd \d+ and \d+/i.test(user))
    return `<think>compare the two numbers</think>yes${suffix}`;
  return `Reply to: ${user}${suffix}`;
}

/** Truncates to `maxTokens` byte tokens (never splitting a multi-byte character mid-way is not our concern). */
export function truncate(text: string, maxTokens: number): { text: string; finish: 'stop' | 'length' } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxTokens) return { text, finish: 'stop' };
  return { text: bytes.subarray(0, maxTokens).toString('utf8'), finish: 'length' };
}
