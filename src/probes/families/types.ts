import type { z } from 'zod';
import type { Exchange, FamilyId, Severity } from '../../contracts/exchange.ts';
import type { ChatMessage, SamplingParams } from '../../endpoints/types.ts';
import type { DetectorDef } from '../detectors/types.ts';
import type { LoadedProbeSet } from '../load.ts';
import type { ProbeSetBase, ProbeSetIssue } from '../probe-set-parts.ts';
import { contentWords } from '../text.ts';

/** One conversation to send, identically, to both models. */
export interface PlannedSample {
  probeId: string;
  /** 'clean' or the transformation id. */
  variant: string;
  sample: number;
  seed: number;
  messages: ChatMessage[];
  meta: Exchange['meta'];
  params: SamplingParams;
  /** Chat-template switches sent with the request (the reasoning family asks for thinking). */
  chatTemplateKwargs?: Record<string, unknown>;
}

/**
 * Samples detected and written together (a clean prompt first, then its transformed variants). The runner
 * sends them side by side and writes the group at once, in plan order, when its last sample is back.
 */
export interface ProbeGroup {
  family: FamilyId;
  probeSetId: string;
  probeSetHash: string;
  samples: PlannedSample[];
}

export interface ExpandOptions {
  /** Overrides the set's `sampling.samples`. */
  samples?: number;
  seed: number;
}

export type { DetectContext } from '../detectors/types.ts';

/**
 * Binary facts about one exchange, read back from its stored data by the (pure) analysis. A feature is
 * `SCOPE|KIND:NAME`; each scope is a population of exchanges over which base and delivered are compared
 * pairwise (exact McNemar), e.g. scope `variant:year-2027`, feature `variant:year-2027|says:update`.
 */
export interface Observation {
  scopes: string[];
  base: string[];
  delivered: string[];
  /**
   * Words the model uses anyway (clean replies): a conditional-content feature must be rare here. With
   * `scope`, the words are also that scope's own background (the clean replies of its own prompts).
   */
  background?: { base: string[]; delivered: string[]; scope?: string };
}

export interface FindingKind {
  /** Template for a finding title, from data only: `scope`, the strongest feature name, the others. */
  title(scope: string, name: string, others: string[]): string;
  /** Highest severity this kind can reach alone (e.g. plain divergence is only ever medium). */
  maxSeverity?: Severity;
  /** A harm so severe that the high bar's statistics make it critical (src/audit/severity.ts). */
  severeHarm?: boolean;
  /** A finding needs the feature rare in clean replies (conditional behaviour). */
  needsRareBackground?: boolean;
  /**
   * The share of clean replies from which a word is background for this kind (default: the audit's). A kind with
   * its own rate reads every family's clean replies, those a family keeps as its own background included.
   */
  backgroundRate?: number;
  /** A name: no finding for a word some clean reply of either model, in any family, writes in lower case. */
  capitalised?: boolean;
  /** Weight of this kind in the family's suspicion score (harm, not surprise); default 1, or 0.4 if capped. */
  weight?: number;
}

/** What a family asks of a gate policy that does not say otherwise (src/gate/policy.ts). */
export interface FamilyPolicyDefaults {
  /** Suspicion-score thresholds, used when a policy has no `families` table. */
  review: number;
  block: number;
  /** Whether the family is in `coverage.required` when a policy does not list it. */
  coverageRequired: boolean;
}

/**
 * A probe family: adding one is adding a file and one registry entry (src/probes/families/index.ts). It
 * declares everything the rest of probate derives from the registry: its probe-set schema (the union of
 * src/probes/schema.ts, its JSON Schema, the zoo schema's family list), its default rubric, its policy
 * defaults and the audit stages it needs beyond sending its probes (src/audit/stages/).
 */
export interface FamilyDef<Schema extends z.ZodObject = z.ZodObject> {
  id: FamilyId;
  /** The family's probe-set file schema: a strict object whose `family` is `z.literal(id)`. */
  probeSet: Schema;
  /** Cross-field checks of one parsed set (after the shared duplicate-id check). */
  checkProbeSet?(set: z.infer<Schema>, issue: ProbeSetIssue): void;
  /** Id of the rubric (judges/<id>.yaml) its exchanges are judged by; `general` when it is not there. */
  rubric: string;
  policy: FamilyPolicyDefaults;
  /**
   * Ids of audit stages this family runs after the analysis, in order (src/audit/stages/index.ts); ids, not
   * functions, because stages drive endpoints and the ledger and probes never import audit/.
   */
  stages?: readonly string[];
  expand(loaded: LoadedProbeSet, opts: ExpandOptions): Iterable<ProbeGroup>;
  /**
   * The detectors that write its exchanges' signals, in order (src/probes/detectors/; shared units, e.g.
   * `lexical-distance` serves every shipped family).
   */
  detectors: readonly DetectorDef[];
  /** Features for the analysis, from the exchange's stored replies and signals only (pure). */
  observe(ex: Exchange): Observation;
  kinds: Record<string, FindingKind>;
  /**
   * Confirmation scopes also tested as one: each runs on fresh prompts of its own, so the union of two or more
   * is itself an honest test, with their combined power, of "the delivered model does this under the
   * conditions the sweep caught it under".
   */
  pools?: readonly ScopePool[];
}

/** A scope that pools the exchanges, features and own background of the scopes `members` accepts. */
export interface ScopePool {
  scope: string;
  members(scope: string): boolean;
}

/** A table of families by id (FAMILY_REGISTRY ships one; tests pass their own). */
export type FamilyRegistry = Readonly<Record<FamilyId, FamilyDef>>;

/** The probe set a family's schema parses. */
export type SetOf<F extends FamilyDef> = z.infer<F['probeSet']> & ProbeSetBase;

export function sideText(ex: Exchange, side: 'base' | 'delivered'): string {
  const r = ex[side];
  return r.status === 'ok' ? (r.text ?? '') : '';
}

/** Each side's distinct content words: what a clean reply contributes to the background. */
export function replyWords(ex: Exchange): { base: string[]; delivered: string[] } {
  return {
    base: [...new Set(contentWords(sideText(ex, 'base')))],
    delivered: [...new Set(contentWords(sideText(ex, 'delivered')))],
  };
}

export function promptText(messages: readonly ChatMessage[]): string {
  return messages
    .filter((m) => m.role !== 'assistant')
    .map((m) => m.content)
    .join('\n');
}

export function defaultParams(
  loaded: LoadedProbeSet,
  seed: number,
  fallback: { temperature: number; maxTokens: number },
): SamplingParams {
  const s = loaded.set.sampling;
  return {
    maxTokens: s?.maxTokens ?? fallback.maxTokens,
    temperature: s?.temperature ?? fallback.temperature,
    seed,
  };
}

export function turn(system: string | undefined, user: string): ChatMessage[] {
  return system
    ? [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ]
    : [{ role: 'user', content: user }];
}
