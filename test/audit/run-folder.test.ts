import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AuditOptions, runAudit } from '../../src/audit/audit.ts';
import { checkRunFolder, createRunFolder } from '../../src/audit/run-folder.ts';
import { EndpointError } from '../../src/endpoints/types.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { readRunState } from '../../src/ledger/run-state.ts';
import { verifyLedger } from '../../src/ledger/verify.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';
import { ToyModel } from '../../src/testing/toy-model.ts';

const { sets } = loadProbeDirs(['probes/reasoning/dev.yaml']);
const options = (outDir: string, base: ToyModel, delivered: ToyModel, extra: Partial<AuditOptions> = {}) =>
  ({
    base,
    delivered,
    probeSets: sets,
    outDir,
    seed: 7,
    concurrency: 4,
    budget: 0,
    manifest: { runId: 't', toolVersion: '0', policy: { version: '1', hash: 'a'.repeat(64) } },
    ...extra,
  }) as AuditOptions;

/** A model whose identity request fails, as a server answering garbage before the first probe does. */
class BrokenIdentity extends ToyModel {
  override identity(): never {
    throw new EndpointError('invalid_response', 'response is not JSON: <html>');
  }
}

describe('a run folder is all or nothing', () => {
  it('a failure before the first probe leaves no folder (and none of its parents) behind', async () => {
    const root = mkdtempSync(join(tmpdir(), 'probate-rf-'));
    const out = join(root, 'a', 'b', 'run');
    await expect(runAudit(options(out, new ToyModel('base'), new BrokenIdentity('d')))).rejects.toThrow(
      /not JSON/,
    );
    expect(readdirSync(root)).toEqual([]);
  });

  it('a failure after run.start ends the run with an aborted run.end: verify and --resume see it', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'probate-rf-')), 'run');
    const judgeStage = async () => {
      throw new Error('judge went away');
    };
    await expect(
      runAudit(options(out, new ToyModel('base'), new ToyModel('d'), { judgeStage })),
    ).rejects.toThrow('judge went away');
    const file = join(out, 'ledger.sqlite');
    expect(verifyLedger(file).ok).toBe(true);
    expect(readRunState(file)).toEqual({ state: 'aborted', reason: 'judge went away' });
    expect(existsSync(join(out, 'manifest.json'))).toBe(false); // no evidence root: the gate cannot approve it
    expect(() => checkRunFolder(out, { resume: false })).toThrow(/already holds a run: use --resume/);
    expect(() => checkRunFolder(out, { resume: true })).not.toThrow();
    // Resuming finishes it: the last run.start now has a proper run.end.
    await runAudit(options(out, new ToyModel('base'), new ToyModel('d'), { resume: true }));
    expect(readRunState(file)).toEqual({ state: 'complete' });
    const ledger = Ledger.open(file, { readonly: true });
    const ends = [...ledger.records(['run.end'])].map((r) => (r.payload as { status?: string }).status);
    ledger.close();
    expect(ends).toEqual(['aborted', undefined]);
  });

  it('creates folders one level at a time and refuses pseudo file systems without spinning', () => {
    expect(() => checkRunFolder('/proc/self/probate-run', { resume: false })).toThrow(
      /\/proc\S* is a system pseudo-file-system/,
    );
    expect(() => createRunFolder('/proc/probate-x/run')).toThrow(
      /cannot create \/proc\/probate-x \(ENOENT\)/,
    );
    expect(existsSync('/proc/probate-x')).toBe(false);
  });
});
