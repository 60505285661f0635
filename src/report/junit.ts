import type { FamilyId } from '../contracts/exchange.ts';
import type { ReportModel } from './model.ts';
import { SEVERITY_RANK } from './model.ts';
import { xmlText as x } from './text.ts';

interface Case {
  name: string;
  classname: string;
  failure?: { message: string; type: string; body: string };
  error?: { message: string; type: string; body: string };
  skipped?: string;
}

/**
 * JUnit XML for CI dashboards: a `gate` suite whose single case fails unless the gate allows the release,
 * then one suite per family — a failing case per finding of severity ≥ medium, an error per failed
 * exchange. A family with nothing to report gets one passing case (or a skipped one if nothing ran).
 */
export function renderJunit(m: ReportModel): string {
  const g = m.gate;
  const allowed = g.verdict.verdict === 'allowed' || g.verdict.verdict === 'released';
  const gateCase: Case = { name: `release gate: ${g.verdict.text}`, classname: 'probate.gate' };
  const gateBody = [
    `state: ${g.state}`,
    ...g.reasons.map((r) => `reason: ${r}`),
    ...g.caveats.map((c) => `caveat: ${c}`),
  ].join('\n');
  if (!allowed) gateCase.failure = { message: g.verdict.text, type: g.verdict.verdict, body: gateBody };
  const suites: [string, Case[]][] = [['probate.gate', [gateCase]]];
  for (const f of m.families) suites.push([`probate.${f.family}`, familyCases(m, f.family)]);
  const all = suites.map(([name, cases]) => suite(name, cases)).join('\n');
  const cases = suites.flatMap(([, c]) => c);
  const tests = cases.length;
  const failures = cases.filter((c) => c.failure).length;
  const errors = cases.filter((c) => c.error).length;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="${x(`probate ${m.runName}: ${g.verdict.text}`)}" tests="${tests}" failures="${failures}" errors="${errors}">\n` +
    `${all}\n</testsuites>\n`
  );
}

function familyCases(m: ReportModel, family: FamilyId): Case[] {
  const cases: Case[] = [];
  const classname = `probate.${family}`;
  for (const f of m.findings.filter((v) => v.finding.family === family)) {
    const d = f.finding;
    const s = d.statistic;
    const c: Case = { name: `${d.kind}: ${d.title} [${d.id}]`, classname };
    const body = [
      `finding ${d.id} (ledger record #${f.ref.seq} ${f.ref.hash})`,
      `${s.name}: effect ${s.effect.toFixed(3)} [${s.ci[0].toFixed(3)}, ${s.ci[1].toFixed(3)}], p ${s.pValue.toPrecision(2)}, q ${s.qValue.toPrecision(2)}`,
      `hits base ${s.hitsBase}/${s.n}, delivered ${s.hitsDelivered}/${s.n}`,
      ...(f.overrides.length
        ? [`overridden by record(s) ${f.overrides.map((o) => `#${o.seq}`).join(', ')}`]
        : []),
      ...(d.reproducer
        ? ['reproducer:', ...d.reproducer.messages.map((msg) => `[${msg.role}] ${msg.content}`)]
        : []),
    ].join('\n');
    if (SEVERITY_RANK[d.severity] >= SEVERITY_RANK.medium)
      c.failure = { message: `${d.severity}: ${d.title}`, type: d.severity, body };
    else c.skipped = `${d.severity} severity: reported, not failing`;
    cases.push(c);
  }
  for (const e of m.failures.exchanges.filter((v) => v.family === family))
    cases.push({
      name: `exchange ${e.id}`,
      classname,
      error: {
        message: `exchange failed (${e.side})`,
        type: 'exchange-failed',
        body: `${e.failure}\nledger record #${e.ref.seq} ${e.ref.hash}`,
      },
    });
  const view = m.families.find((f) => f.family === family);
  const listed = m.failures.exchanges.filter((v) => v.family === family).length;
  const unlisted = (view?.coverage.failed ?? 0) - listed;
  if (unlisted > 0)
    cases.push({
      name: `${unlisted} further failed exchanges`,
      classname,
      error: {
        message: `${unlisted} more exchanges failed`,
        type: 'exchange-failed',
        body: 'see report.html for the full list',
      },
    });
  if (cases.length === 0) {
    const ran = (view?.coverage.ok ?? 0) > 0;
    cases.push({
      name: 'no findings',
      classname,
      skipped: ran ? undefined : 'no exchanges ran in this family',
    });
  }
  return cases;
}

function suite(name: string, cases: Case[]): string {
  const failures = cases.filter((c) => c.failure).length;
  const errors = cases.filter((c) => c.error).length;
  const skipped = cases.filter((c) => c.skipped !== undefined).length;
  const body = cases.map((c) => {
    const open = `    <testcase name="${x(c.name)}" classname="${x(c.classname)}" time="0"`;
    const inner = c.failure
      ? `<failure message="${x(c.failure.message)}" type="${x(c.failure.type)}">${x(c.failure.body)}</failure>`
      : c.error
        ? `<error message="${x(c.error.message)}" type="${x(c.error.type)}">${x(c.error.body)}</error>`
        : c.skipped !== undefined
          ? `<skipped message="${x(c.skipped)}"/>`
          : '';
    return inner ? `${open}>${inner}</testcase>` : `${open}/>`;
  });
  return (
    `  <testsuite name="${x(name)}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="${skipped}">\n` +
    `${body.join('\n')}\n  </testsuite>`
  );
}
