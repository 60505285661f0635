import type { RecordRef, ReportModel } from './model.ts';

const rec = (r: RecordRef | undefined) => (r ? { seq: r.seq, hash: r.hash } : null);

/** Machine-readable report: the gate's verdict first, then the evidence, every item with its record. */
export function reportJson(m: ReportModel): Record<string, unknown> {
  const g = m.gate;
  const t = g.transition;
  const count = (v: string) => m.judges.filter((j) => j.record.verdict === v).length;
  return {
    schema: 'probate.report/v1',
    run: m.runName,
    state: g.state,
    effectiveState: g.effectiveState,
    verdict: g.verdict.verdict,
    verdictText: g.verdict.text,
    reasons: g.reasons,
    caveats: g.caveats,
    decision: t
      ? {
          record: rec(t.ref),
          from: t.from ?? null,
          to: t.to,
          policyVersion: t.policyVersion ?? null,
          policyHash: t.policyHash ?? null,
          evidenceRoot: t.evidenceRoot ?? null,
          capabilityId: t.capabilityId ?? null,
        }
      : null,
    // The ledger head this report was projected from (DESIGN: the head hash is the evidence root).
    evidenceRoot: m.ledger.head.hash,
    manifestEvidenceRoot: m.manifest.evidenceRoot ?? null,
    ledger: { records: m.ledger.records, headSeq: m.ledger.head.seq, chainOk: m.ledger.chain.ok },
    models: m.models,
    probeSets: m.probeSets,
    overall: m.overall ? { score: m.overall.score, record: rec(m.overall.ref) } : null,
    families: m.families.map((f) => ({
      family: f.family,
      score: f.score ?? null,
      ci: f.ci ?? null,
      coverage: f.coverage,
      findings: f.findings,
      record: rec(f.ref),
    })),
    findings: m.findings.map((f) => ({
      id: f.finding.id,
      family: f.finding.family,
      kind: f.finding.kind,
      severity: f.finding.severity,
      title: f.finding.title,
      statistic: f.finding.statistic,
      exchangeIds: f.finding.exchangeIds,
      reproducer: f.finding.reproducer ?? null,
      record: rec(f.ref),
      overriddenBy: f.overrides.map(rec),
    })),
    judges: { flag: count('flag'), uncertain: count('uncertain'), clear: count('clear') },
    exchanges: { total: m.exchangesTotal, failed: m.failures.total },
    failures: {
      exchanges: m.failures.exchanges.map((x) => ({
        id: x.id,
        family: x.family,
        side: x.side,
        failure: x.failure,
        record: rec(x.ref),
      })),
      unreadable: m.failures.unreadable.map((u) => ({ record: rec(u.ref), reason: u.reason })),
    },
    runRecords: { start: rec(m.runStart), end: rec(m.runEnd?.ref) },
  };
}

export function renderJson(m: ReportModel): string {
  return `${JSON.stringify(reportJson(m), null, 2)}\n`;
}
