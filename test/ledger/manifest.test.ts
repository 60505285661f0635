import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Manifest, manifestHash, readManifest, writeManifest } from '../../src/ledger/manifest.ts';

const m: Manifest = {
  schema: 'probate.manifest/v1',
  runId: 'r1',
  toolVersion: '0.1.0',
  createdAt: '2025-01-01T00:00:00Z',
  delivered: {
    ref: 'vllm:http://h:8000#acme',
    kind: 'vllm',
    modelId: 'acme',
    root: 'org/acme',
    serverVersion: '0.9.1',
    fingerprint: 'f'.repeat(64),
  },
  base: {
    ref: 'local:/m/base',
    kind: 'local',
    modelId: 'base',
    weightDigests: { 'onnx/model.onnx': 'a'.repeat(64) },
  },
  probeSets: [{ id: 'ps', hash: 'b'.repeat(64) }],
  rubrics: [],
  judge: null,
  policy: { version: '1', hash: 'c'.repeat(64) },
  extra: { addedByALaterStage: true },
};

describe('manifest', () => {
  it('round-trips atomically, keeps unknown fields, hashes canonically', () => {
    const dir = mkdtempSync(join(tmpdir(), 'man-'));
    const h = writeManifest(dir, m);
    expect(readdirSync(dir)).toEqual(['manifest.json']);
    const back = readManifest(dir);
    expect(back).toEqual(m);
    expect(manifestHash(back)).toBe(h);
    expect(manifestHash({ ...back, evidenceRoot: 'd'.repeat(64) })).not.toBe(h);
  });

  it('rejects a bad field with a one-line error naming file and field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'man-'));
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({ ...m, policy: { version: '1', hash: 'nothex' } }),
    );
    expect(() => readManifest(dir)).toThrow(/manifest\.json: policy\.hash: expected a lowercase sha256/);
    expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).toContain('nothex');
  });
});
