/**
 * Separates reasoning from the answer. A server running a reasoning parser returns it in `reasoning`
 * (newer vLLM) or `reasoning_content` (older); without a parser it stays inline as `<think>…</think>`,
 * and we split it here so every backend yields the same {text, reasoning}. A template that opens
 * `<think>` in the generation prompt leaves only the closing tag in the reply; that is handled too.
 */
export function splitReasoning(
  content: string,
  fields: { reasoning?: string | null; reasoning_content?: string | null } = {},
): { text: string; reasoning?: string } {
  const server = fields.reasoning ?? fields.reasoning_content;
  if (typeof server === 'string') return { text: content, reasoning: server };
  const open = content.indexOf('<think>');
  const close = content.indexOf('</think>');
  if (close < 0) {
    // An unterminated <think> (cut by max_tokens) is all reasoning and no answer.
    if (open >= 0) return { text: content.slice(0, open), reasoning: content.slice(open + 7) };
    return { text: content };
  }
  if (open >= 0 && open < close) {
    return {
      text: content.slice(0, open) + content.slice(close + 8),
      reasoning: content.slice(open + 7, close),
    };
  }
  return { text: content.slice(close + 8), reasoning: content.slice(0, close) };
}
