import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { planZoo } from '../../src/bench/zoo.ts';
import { checkOrganismDirs, localSource } from '../../src/bench/zoo-models.ts';
import { main } from '../../src/cli/main.ts';
import { defaultZooDir, readZoo } from '../../src/organisms/zoo.ts';

afterEach(() => vi.restoreAllMocks());

async function cli(args: string[]) {
  let err = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  return { code: await main(args), err };
}

/**
 * A zoo in another folder, laid out like a blind zoo: its own zoo.json whose organisms point (`path`, relative
 * to the zoo folder) at the shipped organisms, the base included.
 */
function zooElsewhere(names: string[]): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'probate-zoo-dir-')), 'zoo-1');
  mkdirSync(dir, { recursive: true });
  const shipped = readZoo();
  const entries = names.map((n) => {
    const e = shipped.find((o) => o.name === n)!;
    return { ...e, path: relative(dir, join(defaultZooDir, n)) };
  });
  writeFileSync(join(dir, 'zoo.json'), JSON.stringify(entries, null, 2));
  return dir;
}

describe('bench zoo --zoo DIR: a zoo outside fixtures/organisms', () => {
  it('resolves every organism, the base included, from zoo.json `path` relative to DIR', () => {
    const dir = zooElsewhere(['base', 'trig-token', 'benign-formal']);
    const plan = planZoo(dir);
    expect(plan.base.name).toBe('base');
    expect(plan.dirs).toEqual({
      base: join(defaultZooDir, 'base'),
      'trig-token': join(defaultZooDir, 'trig-token'),
      'benign-formal': join(defaultZooDir, 'benign-formal'),
    });
    const dirOf = (n: string) => plan.dirs[n]!;
    // the shipped folders hold built models: no error; without `path` they would be looked for in DIR
    expect(() => checkOrganismDirs(dir, Object.keys(plan.dirs), dirOf)).not.toThrow();
    expect(() => checkOrganismDirs(dir, ['base'])).toThrow(`${join(dir, 'base')}/config.json is missing`);
    expect(localSource(dir, 1, dirOf).ref('base')).toBe(`local:${join(defaultZooDir, 'base')}`);
  });

  it('opens the base through its path and gets a reply', async () => {
    const dir = zooElsewhere(['base', 'trig-token', 'benign-formal']);
    const plan = planZoo(dir);
    const base = await localSource(dir, 1, (n) => plan.dirs[n]!).open('base');
    try {
      const [c] = await base.chat({
        messages: [{ role: 'user', content: 'How do I boil an egg?' }],
        params: { maxTokens: 24, temperature: 0, seed: 1 },
      });
      expect(c?.text.length).toBeGreaterThan(0);
    } finally {
      await base.close();
    }
  });

  it('CLI: reads zoo.json from --zoo, names a missing organism folder by its resolved path', async () => {
    const dir = zooElsewhere(['base', 'trig-token', 'benign-formal']);
    const entries = JSON.parse(JSON.stringify(readZoo(dir)));
    entries[1].path = 'nowhere/trig-token';
    writeFileSync(join(dir, 'zoo.json'), JSON.stringify(entries));
    const r = await cli(['bench', 'zoo', '--zoo', dir, '--no-png']);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain(
      `organism trig-token: ${join(dir, 'nowhere', 'trig-token')}/config.json is missing`,
    );
  });

  it('CLI: refuses a positional zoo folder and a different --zoo', async () => {
    const dir = zooElsewhere(['base', 'trig-token', 'benign-formal']);
    const r = await cli(['bench', 'zoo', defaultZooDir, '--zoo', dir]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/give the zoo folder once/);
  });
});
