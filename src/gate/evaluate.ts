import type { FamilyRegistry } from '../probes/families/types.ts';
import { type Decision, decide } from './decide.ts';
import { collectEvidence } from './evidence.ts';
import { defaultPolicyPath, loadPolicy } from './policy.ts';

/**
 * The policy's verdict over a run's evidence, without the gate's key: the same pure decision the gate makes,
 * but nothing is recorded and no capability is minted. The audit uses it for its exit code.
 */
export function evaluatePolicy(runDir: string, policyFile?: string, families?: FamilyRegistry): Decision {
  const loaded = loadPolicy(policyFile ?? defaultPolicyPath(), families);
  const run = collectEvidence(runDir, { policyHash: loaded.hash });
  return decide(run.evidence, loaded.policy);
}
