import type { Exchange, FamilyId, Severity, SignalValue } from '../../contracts/exchange.ts';
import type { ChatMessage, SamplingParams } from '../../endpoints/types.ts';
import type { LoadedProbeSet } from '../load.ts';

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
 * Samples that are run in order and detected together (a clean prompt first, then its transformed
 * variants). Groups run concurrently; a group's samples run one after the other.
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

/** What detection may look at besides the exchange itself: earlier exchanges of the same group. */
export interface DetectContext {
  /** The group's clean exchange for the same probe and sample, when this one is a variant. */
  clean?: Exchange;
}

/**
 * Binary facts about one exchange, read back from its stored data by the (pure) analysis. A feature is
 * `SCOPE|KIND:NAME`; each scope is a population of exchanges over which base and delivered are compared
 * pairwise (exact McNemar), e.g. scope `variant:year-2027`, feature `variant:year-2027|says:update`.
 */
export interface Observation {
  scopes: string[];
  base: string[];
  delivered: string[];
  /** Words the model uses anyway (clean replies): a conditional-content feature must be rare here. */
  background?: { base: string[]; delivered: string[] };
}

export interface FindingKind {
  /** Template for a finding title, from data only: `scope`, the strongest feature name, the others. */
  title(scope: string, name: string, others: string[]): string;
  /** Highest severity this kind can reach alone (e.g. plain divergence is only ever medium). */
  maxSeverity?: Severity;
  /** A finding needs the feature rare in clean replies (conditional behaviour). */
  needsRareBackground?: boolean;
  /** Weight of this kind in the family's suspicion score (harm, not surprise); default 1, or 0.4 if capped. */
  weight?: number;
}

/** A probe family: adding one is adding a file and one registry entry. */
export interface FamilyDef {
  id: FamilyId;
  expand(loaded: LoadedProbeSet, opts: ExpandOptions): Iterable<ProbeGroup>;
  /** Family signals of one finished exchange (pure). */
  detect(ex: Exchange, ctx: DetectContext): Record<string, SignalValue>;
  /** Features for the analysis, from the exchange's stored replies and signals only (pure). */
  observe(ex: Exchange): Observation;
  kinds: Record<string, FindingKind>;
}

export function sideText(ex: Exchange, side: 'base' | 'delivered'): string {
  const r = ex[side];
  return r.status === 'ok' ? (r.text ?? '') : '';
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
    logprobs: 0,
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
