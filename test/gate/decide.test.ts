import { describe, expect, it } from 'vitest';
import { decide, type Evidence } from '../../src/gate/decide.ts';
import { defaultPolicyPath, loadPolicy } from '../../src/gate/policy.ts';
import { FAMILIES } from '../../src/probes/families/index.ts';

const { policy } = loadPolicy(defaultPolicyPath());

function clean(): Evidence {
  return {
    integrity: [],
    runEnded: true,
    inconsistencies: [],
    auditPolicyHash: 'p',
    policyHash: 'p',
    judge: { present: true, calibrated: true },
    families: FAMILIES.map((family) => ({
      family,
      planned: 10,
      ok: 10,
      failed: 0,
      score: 0.1,
      judge: { flag: 0, clear: 10, uncertain: 0 },
    })),
    findings: [],
    orphanJudgements: 0,
    overridden: [],
  };
}

describe('decide (pure)', () => {
  it('clean evidence is COMMITTABLE', () => {
    expect(decide(clean(), policy).state).toBe('COMMITTABLE');
  });

  it('any critical finding is BLOCKED, even alongside review reasons', () => {
    const e = {
      ...clean(),
      runEnded: false,
      findings: [{ id: 'triggers:x:1', family: 'triggers' as const, severity: 'critical' as const }],
    };
    const d = decide(e, policy);
    expect(d.state).toBe('BLOCKED');
    expect(d.reasons[0]).toBe('critical finding triggers:x:1');
  });

  it('fails closed on missing run.end, failures, uncertainty, missing family, uncalibrated judge', () => {
    const cases: Array<[string, Evidence]> = [
      ['did not complete', { ...clean(), runEnded: false }],
      [
        'failed exchange',
        {
          ...clean(),
          families: clean().families.map((f) => (f.family === 'reasoning' ? { ...f, failed: 1, ok: 9 } : f)),
        },
      ],
      [
        'uncertain',
        {
          ...clean(),
          families: clean().families.map((f) =>
            f.family === 'injection' ? { ...f, judge: { ...f.judge, uncertain: 1 } } : f,
          ),
        },
      ],
      [
        'no answered exchanges',
        { ...clean(), families: clean().families.filter((f) => f.family !== 'preferences') },
      ],
      ['not calibrated', { ...clean(), judge: { present: true, calibrated: false } }],
      ['high finding', { ...clean(), findings: [{ id: 'h', family: 'triggers', severity: 'high' }] }],
      [
        'score',
        {
          ...clean(),
          families: clean().families.map((f) => (f.family === 'triggers' ? { ...f, score: 0.4 } : f)),
        },
      ],
    ];
    for (const [needle, e] of cases) {
      const d = decide(e, policy);
      expect(d.state, needle).toBe('REVIEW_REQUIRED');
      expect(d.reasons.join('\n'), needle).toContain(needle);
    }
  });

  it('a low finding passes under the default severity mapping; a policy can make high pass', () => {
    expect(
      decide({ ...clean(), findings: [{ id: 'l', family: 'triggers', severity: 'low' }] }, policy).state,
    ).toBe('COMMITTABLE');
    const lenient = { ...policy, severity: { ...policy.severity, high: 'pass' as const } };
    expect(
      decide({ ...clean(), findings: [{ id: 'h', family: 'triggers', severity: 'high' }] }, lenient).state,
    ).toBe('COMMITTABLE');
  });

  it('an overridden critical finding needs review (default), never COMMITTABLE; overridden high clears', () => {
    const crit = {
      ...clean(),
      findings: [{ id: 'c', family: 'triggers' as const, severity: 'critical' as const }],
      overridden: ['c'],
    };
    expect(decide(crit, policy).state).toBe('REVIEW_REQUIRED');
    const high = {
      ...clean(),
      findings: [{ id: 'h', family: 'triggers' as const, severity: 'high' as const }],
      overridden: ['h'],
    };
    expect(decide(high, policy).state).toBe('COMMITTABLE');
  });

  it('broken evidence integrity blocks', () => {
    expect(decide({ ...clean(), integrity: ['ledger: record 3 edited'] }, policy).state).toBe('BLOCKED');
  });

  it("the audit's own policy is a label, not a rule: the decision follows the policy it is given", () => {
    const e = {
      ...clean(),
      auditPolicyHash: 'lax',
      findings: [{ id: 'h', family: 'triggers' as const, severity: 'high' as const }],
    };
    expect(decide(e, policy).state).toBe('REVIEW_REQUIRED');
    expect(decide(clean(), policy).state).toBe('COMMITTABLE');
  });

  it('is deterministic: same evidence, same decision', () => {
    const e = {
      ...clean(),
      findings: [
        { id: 'b', family: 'triggers' as const, severity: 'high' as const },
        { id: 'a', family: 'reasoning' as const, severity: 'medium' as const },
      ],
    };
    expect(decide(e, policy)).toEqual(decide({ ...e, findings: [...e.findings].reverse() }, policy));
  });
});
