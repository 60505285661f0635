import type { ExchangeView, FindingView, RecordRef, ReportModel } from './model.ts';
import type { ExchangePayload } from './schemas.ts';
import { mdInline as i, mdFence, plainText, shortHash } from './text.ts';

/** Markdown report (PR comments, terminals). Model text only ever appears inside unbreakable code fences. */
export function renderMarkdown(m: ReportModel): string {
  const g = m.gate;
  const out: string[] = [`# probate report — ${i(g.verdict.text)}`, ''];
  const decided = g.transition ? `, decided in ${ref(g.transition.ref)}` : '';
  const policy = !g.transition && g.policy ? g.policy : undefined;
  out.push(
    policy
      ? `**Verdict: ${i(g.verdict.text)}** (policy ${i(policy.policyVersion)} \`${shortHash(policy.policyHash)}\` over this ledger; gate state ${code(g.state)})`
      : `**Verdict: ${i(g.verdict.text)}** (gate state ${code(g.state)}${decided})`,
    '',
  );
  const reasons = policy ? policy.reasons : g.reasons;
  for (const r of reasons) out.push(`- ${i(r)}`);
  for (const c of g.caveats) out.push(`> ⚠ ${i(c)}`, '');
  if (reasons.length) out.push('');
  out.push(
    `Run ${code(m.runName)} · ${m.exchangesTotal} exchanges (${m.failures.total} failed) · ${m.findings.length} findings · ` +
      `overall suspicion ${m.overall ? `${m.overall.score.toFixed(2)} ${ref(m.overall.ref)}` : '—'} · ledger ${m.ledger.records} records, ` +
      `head \`${shortHash(m.ledger.head.hash)}\`${m.ledger.chain.ok ? '' : ` **(verification failed at #${m.ledger.chain.brokenAt}: ${i(m.ledger.chain.problem ?? '')})**`}`,
    '',
  );
  for (const side of ['base', 'delivered'] as const) {
    const id = m.models[side];
    out.push(`- ${side}: ${id?.ref ? i(id.ref) : 'unknown'}${id?.modelId ? ` (${i(id.modelId)})` : ''}`);
  }
  out.push(
    '',
    '## Families',
    '',
    '| family | score | 95% CI | coverage ok/planned | findings | record |',
    '|---|---:|---|---:|---:|---|',
  );
  for (const f of m.families)
    out.push(
      `| ${f.family} | ${num(f.score)} | ${f.ci ? `[${num(f.ci[0])}, ${num(f.ci[1])}]` : '—'} | ${f.coverage.ok}/${f.coverage.planned}` +
        `${f.coverage.failed ? ` (${f.coverage.failed} failed)` : ''} | ${f.findings} | ${f.ref ? ref(f.ref) : '—'} |`,
    );
  out.push('', `## Findings (${m.findings.length})`, '');
  if (m.findings.length === 0) out.push('No finding records in the ledger.', '');
  for (const f of m.findings) out.push(...finding(f));
  if (m.judges.length) {
    const count = (v: string) => m.judges.filter((j) => j.record.verdict === v).length;
    out.push(
      '## Judge verdicts',
      '',
      `flag ${count('flag')} · uncertain ${count('uncertain')} · clear ${count('clear')}`,
      '',
    );
  }
  if (m.overrides.length || m.releases.length || m.triggers.length) {
    out.push('## Gate records', '');
    for (const r of [...m.overrides, ...m.releases, ...m.triggers])
      out.push(`- ${i(r.summary)} ${ref(r.ref)}`);
    out.push('');
  }
  out.push('## Failures & coverage', '');
  if (m.failures.total === 0) out.push('No failed exchanges.');
  for (const x of m.failures.exchanges)
    out.push(`- ${code(x.id)} (${x.family}, ${x.side}): ${i(x.failure)} ${ref(x.ref)}`);
  if (m.failures.total > m.failures.exchanges.length)
    out.push(`- … ${m.failures.total - m.failures.exchanges.length} more`);
  for (const u of m.failures.unreadable) out.push(`- unreadable record ${ref(u.ref)}: ${i(u.reason)}`);
  out.push('', '## Ledger records cited', '', '| seq | kind | sha256 |', '|---:|---|---|');
  for (const r of m.appendix) out.push(`| ${r.seq} | ${r.kind} | \`${r.hash}\` |`);
  return `${out.join('\n')}\n`;
}

/** Inline code span: backticks and line breaks removed so the span cannot be closed early. */
function code(text: string): string {
  return `\`${plainText(text)
    .replace(/`/g, "'")
    .replace(/\s*\n\s*/g, ' ')}\``;
}

function ref(r: RecordRef): string {
  return `[#${r.seq}·${shortHash(r.hash, 8)}]`;
}

function num(v: number | undefined): string {
  return v === undefined ? '—' : v.toFixed(3);
}

function finding(f: FindingView): string[] {
  const x = f.finding;
  const s = x.statistic;
  const out = [
    `### [${x.severity.toUpperCase()}] ${i(x.title)}`,
    '',
    `${code(x.id)} · family ${x.family} · kind ${code(x.kind)} · record ${ref(f.ref)}`,
    '',
    `${i(s.name)}: effect ${s.effect.toFixed(3)} [${s.ci[0].toFixed(3)}, ${s.ci[1].toFixed(3)}], hits base ${s.hitsBase}/${s.n} → delivered ${s.hitsDelivered}/${s.n}, p ${s.pValue.toPrecision(2)}, q ${s.qValue.toPrecision(2)}`,
    '',
  ];
  if (f.overrides.length) out.push(`Overridden by ${f.overrides.map(ref).join(', ')}`, '');
  if (x.reproducer) {
    out.push(`Minimal reproducer (variant ${code(x.reproducer.variant)}):`, '');
    for (const msg of x.reproducer.messages) out.push(`*${msg.role}*`, '', mdFence(msg.content), '');
  }
  for (const ex of f.exchanges) out.push(...exchange(ex));
  return out;
}

function exchange(x: ExchangeView): string[] {
  const ex = x.exchange;
  const out = [`Exchange ${code(ex.id)} ${ref(x.ref)}`, ''];
  for (const side of ['base', 'delivered'] as const) out.push(`*${side}:*`, '', reply(ex[side]), '');
  const j = x.judge?.record;
  if (j)
    out.push(
      `Judge: ${j.verdict} (${j.severity ?? 'severity unknown'}, confidence ${j.confidence?.toFixed(2) ?? '—'})${x.judge?.ref ? ` ${ref(x.judge.ref)}` : ''}`,
      '',
    );
  return out;
}

function reply(r: ExchangePayload['base']): string {
  if (r.status === 'failed') return `_no reply: ${i(r.failure?.kind ?? 'failed')}_`;
  return mdFence(r.text ?? '');
}
