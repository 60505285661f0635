import type { RecordRef, ReportModel } from './model.ts';

/** Every record the report cites, once each, in ledger order: the report's appendix. */
export function citedRecords(m: Omit<ReportModel, 'appendix'>): RecordRef[] {
  const refs: (RecordRef | undefined)[] = [
    m.runStart,
    m.runEnd?.ref,
    m.overall?.ref,
    ...m.gate.history.map((h) => h.ref),
    m.gate.transition?.ref,
    m.gate.transition?.evidenceRootRecord,
    m.manifest.evidenceRootRecord,
    ...m.families.map((f) => f.ref),
    ...m.findings.flatMap((f) => [
      f.ref,
      ...f.overrides,
      ...f.exchanges.flatMap((x) => [x.ref, x.judge?.ref]),
    ]),
    ...m.judges.map((j) => j.ref),
    ...[...m.triggers, ...m.overrides, ...m.releases].map((g) => g.ref),
    ...m.failures.exchanges.map((x) => x.ref),
    ...m.failures.unreadable.map((u) => u.ref),
  ];
  const bySeq = new Map<number, RecordRef>();
  for (const r of refs) if (r) bySeq.set(r.seq, r);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}
