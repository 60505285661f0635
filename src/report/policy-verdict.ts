import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import type { DecidedState } from '../gate/decide.ts';
import { evaluatePolicy } from '../gate/evaluate.ts';
import { defaultPolicyPath, loadPolicy } from '../gate/policy.ts';
import type { FamilyRegistry } from '../probes/families/types.ts';
import type { VerdictView } from './model.ts';

const RecordedPolicy = z.looseObject({ hash: z.string(), path: z.string().optional() });

/** The policy's verdict over the run's evidence, as the audit evaluated it (no gate decided). */
export interface PolicyVerdict {
  state: DecidedState;
  reasons: string[];
  policyVersion: string;
  policyHash: string;
}

export const NOT_DECIDED_BY_GATE = 'evaluated by the audit, not decided by a gate';

/**
 * What the headline says when no gate has decided: the policy's state over the same verified evidence the
 * CLI printed, marked as the audit's evaluation. A COMMITTABLE evaluation is not a release (only the gate
 * mints one), so it reads as not decided rather than allowed.
 */
export function policyHeadline(state: DecidedState): VerdictView {
  switch (state) {
    case 'BLOCKED':
      return { verdict: 'blocked', text: `BLOCKED — ${NOT_DECIDED_BY_GATE}`, tone: 'bad' };
    case 'REVIEW_REQUIRED':
      return { verdict: 'review', text: `REVIEW_REQUIRED — ${NOT_DECIDED_BY_GATE}`, tone: 'warn' };
    case 'COMMITTABLE':
      return {
        verdict: 'undecided',
        text: `COMMITTABLE — ${NOT_DECIDED_BY_GATE}; no release without the gate`,
        tone: 'neutral',
      };
  }
}

/**
 * Evaluates the run's recorded policy over its ledger (the gate's pure `decide`, nothing recorded). The
 * policy file is the one named (`--policy`), else the manifest's path, else the shipped default, and only a
 * file whose hash is the run's recorded policy hash is used. Undefined when none can be found or the run
 * has no readable manifest: the headline then stays "not decided".
 */
export function evaluateRunPolicy(
  runDir: string,
  recordedPolicy: unknown,
  policyFile?: string,
  families?: FamilyRegistry,
): PolicyVerdict | undefined {
  const parsed = RecordedPolicy.safeParse(recordedPolicy);
  if (!parsed.success) return undefined;
  const recorded = parsed.data;
  const candidates = [
    policyFile,
    recorded.path && (isAbsolute(recorded.path) ? recorded.path : join(process.cwd(), recorded.path)),
    defaultPolicyPath(),
  ].filter((p): p is string => typeof p === 'string' && existsSync(p));
  for (const file of candidates) {
    try {
      const loaded = loadPolicy(file, families);
      if (loaded.hash !== recorded.hash) continue;
      const d = evaluatePolicy(runDir, file, families);
      return {
        state: d.state,
        reasons: d.reasons,
        policyVersion: loaded.policy.version,
        policyHash: loaded.hash,
      };
    } catch {
      // An unreadable policy or manifest: no evaluation to show (the report says not decided).
    }
  }
  return undefined;
}

/** Long floats in reason text (`0.9008455261056207`) → three decimals; integers and short numbers untouched. */
export function roundNumbers(text: string): string {
  return text.replace(/-?\d+\.\d{4,}/g, (n) => String(Number(Number(n).toFixed(3))));
}
