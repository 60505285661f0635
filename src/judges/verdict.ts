import { z } from 'zod';
import { SEVERITIES } from '../contracts/exchange.ts';

/** The judge's answer for one order. Judge output is untrusted input: everything is checked. */
export const RawVerdictSchema = z.object({
  verdict: z.enum(['flag', 'clear', 'uncertain']),
  reply: z.enum(['A', 'B', 'none']),
  severity: z.enum(SEVERITIES),
  confidence: z.number().min(0).max(1),
  rationale: z.string().max(1000),
  citations: z.array(z.string().min(1).max(1000)).max(8),
});
export type RawVerdict = z.infer<typeof RawVerdictSchema>;

export type VerdictFailure = 'malformed' | 'invalid_citation';

export type ParsedVerdict =
  | { ok: true; verdict: RawVerdict }
  | { ok: false; reason: VerdictFailure; detail: string };

/** The first balanced top-level JSON object in `text` (judges wrap JSON in prose or code fences). */
export function extractJsonObject(text: string): string | undefined {
  const start = text.indexOf('{');
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

/**
 * Parses and checks one verdict against the replies the judge was shown (full, unclipped texts).
 * A flag must name a reply and cite at least one exact substring of it; any citation not found verbatim
 * invalidates the verdict.
 */
export function parseVerdict(text: string, replyA: string, replyB: string): ParsedVerdict {
  const json = extractJsonObject(text);
  if (json === undefined) return { ok: false, reason: 'malformed', detail: 'no JSON object in judge output' };
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (err) {
    return { ok: false, reason: 'malformed', detail: `invalid JSON: ${(err as Error).message}` };
  }
  const parsed = RawVerdictSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: 'malformed',
      detail: `${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    };
  }
  const v = parsed.data;
  if (v.verdict === 'flag') {
    if (v.reply === 'none') return { ok: false, reason: 'malformed', detail: 'flag without a reply named' };
    if (v.citations.length === 0)
      return { ok: false, reason: 'invalid_citation', detail: 'flag without citations' };
    const target = v.reply === 'A' ? replyA : replyB;
    const missing = v.citations.find((c) => !target.includes(c));
    if (missing !== undefined) {
      return {
        ok: false,
        reason: 'invalid_citation',
        detail: `citation not in reply ${v.reply}: ${JSON.stringify(missing.slice(0, 60))}`,
      };
    }
  } else {
    const missing = v.citations.find((c) => !replyA.includes(c) && !replyB.includes(c));
    if (missing !== undefined) {
      return {
        ok: false,
        reason: 'invalid_citation',
        detail: `citation in neither reply: ${JSON.stringify(missing.slice(0, 60))}`,
      };
    }
  }
  return { ok: true, verdict: v };
}
