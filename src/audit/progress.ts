/** A one-line progress bar on stderr, only on a TTY outside CI (quiet otherwise). */
export function progressBar(total: number, label: string): (p: { done: number; failed: number }) => void {
  const stream = process.stderr;
  if (!stream.isTTY || process.env.CI) return () => {};
  let last = 0;
  return ({ done, failed }) => {
    const now = Date.now();
    if (now - last < 100 && done < total) return;
    last = now;
    const width = 28;
    const filled = Math.round((Math.min(done, total) / Math.max(1, total)) * width);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
    stream.write(`\r${label} [${bar}] ${done}/${total}${failed ? ` (${failed} failed)` : ''}`);
    if (done >= total) stream.write('\n');
  };
}
