/** Splits a complete `text/event-stream` body into its `data:` payloads, stopping at `[DONE]`. */
export function sseData(body: string): { events: string[]; done: boolean } {
  const events: string[] = [];
  for (const block of body.replace(/\r\n/g, '\n').split(/\n\n+/)) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '') continue;
    if (data === '[DONE]') return { events, done: true };
    events.push(data);
  }
  return { events, done: false };
}
