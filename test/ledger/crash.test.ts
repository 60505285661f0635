import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ledger, QUEUE_RECORDS } from '../../src/ledger/ledger.ts';
import { verifyLedger } from '../../src/ledger/verify.ts';

const writer = new URL('./crash-writer.ts', import.meta.url).pathname;

/** Runs the writer; with killAfter, SIGKILLs it once that many exchanges were committed. */
function runWriter(
  file: string,
  total: number,
  killAfter?: number,
  mode: 'append' | 'queue' = 'append',
): Promise<{ committed: string[]; signal: string | null }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, file, String(total), mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const committed: string[] = [];
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      committed.push(...lines);
      if (killAfter !== undefined && committed.length >= killAfter) child.kill('SIGKILL');
    });
    child.on('error', fail);
    child.on('close', (_code, signal) => done({ committed, signal }));
  });
}

describe('ledger under kill -9', () => {
  for (const mode of ['append', 'queue'] as const)
    it(`${mode === 'append' ? 'loses at most the in-flight exchange' : 'group commit: loses at most the queued exchanges'}, and resume neither duplicates nor loses records`, async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'crash-')), 'ledger.sqlite');
      const total = 4000;
      const first = await runWriter(file, total, 50, mode);
      expect(first.signal).toBe('SIGKILL');
      expect(verifyLedger(file).ok).toBe(true);
      const afterCrash = Ledger.open(file);
      const ids = afterCrash.exchangeIds();
      // Every exchange the child reported committed survived; nothing half-written (attempts without their exchange).
      expect(first.committed.length).toBeGreaterThanOrEqual(50);
      for (const id of first.committed) expect(ids.has(id)).toBe(true);
      expect(afterCrash.count('attempts')).toBe(
        afterCrash.count('exchange') / (mode === 'queue' ? QUEUE_RECORDS : 1),
      );
      expect(ids.size).toBeLessThan(total);
      afterCrash.close();

      const second = await runWriter(file, total, undefined, mode);
      expect(second.signal).toBeNull();
      expect(verifyLedger(file).ok).toBe(true);
      const final = Ledger.open(file, { readonly: true });
      expect(final.count('exchange')).toBe(total);
      expect(final.exchangeIds().size).toBe(total);
      // One attempts record per commit: per exchange appended, per QUEUE_RECORDS queued.
      expect(final.count('attempts')).toBe(mode === 'append' ? total : Math.ceil(total / QUEUE_RECORDS));
      final.close();
    });
});
