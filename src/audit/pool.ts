/**
 * Runs `worker` over items pulled lazily from `items` with at most `concurrency` in flight. Pulling lazily
 * keeps memory flat: only the items in flight exist at once.
 */
export async function runPool<T>(
  items: Iterable<T>,
  concurrency: number,
  worker: (item: T) => Promise<void>,
): Promise<void> {
  const it = items[Symbol.iterator]();
  let failure: unknown;
  const lane = async (): Promise<void> => {
    for (;;) {
      if (failure) return;
      const next = it.next();
      if (next.done) return;
      try {
        await worker(next.value);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, lane));
  if (failure) throw failure;
}
