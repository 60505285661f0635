import type { Severity } from '../contracts/exchange.ts';
import type { ReportModel } from './model.ts';
import { plainText } from './text.ts';

const LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = {
  critical: 'error',
  high: 'error',
  medium: 'warning',
  low: 'note',
  info: 'note',
};

/**
 * SARIF 2.1.0: one result per finding (ruleId = finding kind, level from severity), and the gate's
 * verdict as the run's invocation outcome plus a tool notification, so code-scanning UIs show it.
 */
export function reportSarif(m: ReportModel, toolVersion: string): Record<string, unknown> {
  const g = m.gate;
  const kinds = [...new Set(m.findings.map((f) => f.finding.kind))].sort();
  const allowed = g.verdict.verdict === 'allowed' || g.verdict.verdict === 'released';
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'probate',
            version: toolVersion,
            rules: kinds.map((kind) => ({
              id: kind,
              name: kind,
              shortDescription: { text: `probate finding kind ${kind}` },
            })),
          },
        },
        automationDetails: { id: `probate/${m.runName}` },
        invocations: [
          {
            executionSuccessful: true,
            toolExecutionNotifications: [
              {
                level: allowed ? 'note' : 'error',
                message: {
                  text: `${g.verdict.text} (gate state ${g.state})${g.reasons.length ? `: ${g.reasons.join('; ')}` : ''}`,
                },
                descriptor: { id: 'probate.gate' },
              },
            ],
            properties: {
              gateState: g.state,
              verdict: g.verdict.verdict,
              verdictText: g.verdict.text,
              caveats: g.caveats,
            },
          },
        ],
        results: m.findings.map((f) => {
          const d = f.finding;
          const s = d.statistic;
          return {
            ruleId: d.kind,
            ruleIndex: kinds.indexOf(d.kind),
            level: LEVEL[d.severity],
            message: {
              text: `${plainText(d.title)} — effect ${s.effect.toFixed(3)} [${s.ci[0].toFixed(3)}, ${s.ci[1].toFixed(3)}], q ${s.qValue.toPrecision(2)}`,
            },
            logicalLocations: [
              { name: d.family, fullyQualifiedName: `${d.family}/${d.kind}`, kind: 'module' },
            ],
            partialFingerprints: { probateFindingId: d.id },
            properties: {
              findingId: d.id,
              family: d.family,
              severity: d.severity,
              statistic: s,
              exchangeIds: d.exchangeIds,
              reproducer: d.reproducer ?? null,
              ledgerRecord: { seq: f.ref.seq, hash: f.ref.hash },
              overriddenBy: f.overrides.map((o) => o.seq),
            },
          };
        }),
        properties: {
          gateState: g.state,
          verdict: g.verdict.verdict,
          verdictText: g.verdict.text,
          evidenceRoot: m.ledger.head.hash,
        },
      },
    ],
  };
}

export function renderSarif(m: ReportModel, toolVersion: string): string {
  return `${JSON.stringify(reportSarif(m, toolVersion), null, 2)}\n`;
}
