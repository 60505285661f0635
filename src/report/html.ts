import { CHART_COLORS, intervalBarChart, stripPlot } from '../util/svg-charts.ts';
import { anchorId, findingHtml, fmt, recLink, table } from './html-parts.ts';
import { reportCss, SEVERITY_COLORS } from './html-style.ts';
import type { IdentityView, ReportModel } from './model.ts';
import { escapeHtml as e, htmlText, shortHash } from './text.ts';

/**
 * One self-contained HTML file: inline CSS and SVG, no script, and a CSP that forbids loading or running
 * anything — so even a rendering bug cannot let model text execute. The banner is the gate's verdict.
 */
export function renderHtml(m: ReportModel): string {
  const verdict = m.gate.verdict;
  const title = `probate · ${m.runName} · ${verdict.text}`;
  const sections = [
    summarySection(m),
    familiesSection(m),
    findingsSection(m),
    judgesSection(m),
    gateSection(m),
    failuresSection(m),
    appendixSection(m),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${e(title)}</title><style>${reportCss(verdict.tone)}</style></head>
<body>
${banner(m)}
<main>
<nav class="toc"><a href="#summary">Summary</a><a href="#families">Families</a><a href="#findings">Findings (${m.findings.length})</a><a href="#judges">Judges</a><a href="#gate">Gate</a><a href="#failures">Failures &amp; coverage</a><a href="#records">Ledger records</a></nav>
${sections.join('\n')}
</main>
<footer>Projected from the evidence ledger of run ${e(m.runName)} · head #${m.ledger.head.seq} <span class="mono">${e(m.ledger.head.hash)}</span></footer>
</body></html>
`;
}

function banner(m: ReportModel): string {
  const g = m.gate;
  const t = g.transition;
  const meta = t
    ? `Gate state <b>${e(g.state)}</b> · decided in ${recLink(t.ref)}` +
      (t.policyVersion ? ` · policy ${e(t.policyVersion)}` : '') +
      (t.policyHash ? ` <span class="mono">${e(shortHash(t.policyHash))}</span>` : '')
    : g.policy
      ? `No gate decision · policy ${e(g.policy.policyVersion)} <span class="mono">${e(shortHash(g.policy.policyHash))}</span> evaluated by the audit over this ledger`
      : `Gate state <b>${e(g.state)}</b>`;
  const shown = t ? g.reasons : (g.policy?.reasons ?? g.reasons);
  const reasons = shown.length ? `<ul>${shown.map((r) => `<li>${htmlText(r)}</li>`).join('')}</ul>` : '';
  const caveats = g.caveats.map((c) => `<div class="caveat">⚠ ${htmlText(c)}</div>`).join('');
  return `<header class="banner" id="verdict" data-verdict="${e(g.verdict.verdict)}"><div class="eyebrow">probate audit · ${e(m.runName)}</div><h1>${e(g.verdict.text)}</h1><div class="meta">${meta}</div>${reasons}${caveats}</header>`;
}

function identityRow(side: string, i: IdentityView | undefined): string[] {
  return [
    e(side),
    i?.ref ? `<code>${htmlText(i.ref)}</code>` : '<span class="muted">unknown</span>',
    i?.modelId ? htmlText(i.modelId) : '—',
    i?.fingerprint ? `<span class="mono">${e(shortHash(i.fingerprint, 16))}</span>` : '—',
  ];
}

function summarySection(m: ReportModel): string {
  const bySev = (s: string) => m.findings.filter((f) => f.finding.severity === s).length;
  const cards = [
    [
      'Findings',
      String(m.findings.length),
      `${bySev('critical')} critical · ${bySev('high')} high · ${bySev('medium')} medium`,
    ],
    ['Overall suspicion', fmt(m.overall?.score, 2), m.overall ? recLink(m.overall.ref) : 'no score record'],
    ['Exchanges', String(m.exchangesTotal), `${m.failures.total} failed`],
    [
      'Ledger',
      `${m.ledger.records} records`,
      m.ledger.chain.ok
        ? 'hash chain intact'
        : `<span class="warn" title="${e(m.ledger.chain.problem ?? '')}">verification failed at #${m.ledger.chain.brokenAt}</span>`,
    ],
  ]
    .map(
      ([k, val, sub]) =>
        `<div class="card"><div class="k">${k}</div><div class="v">${val}</div><div class="muted">${sub}</div></div>`,
    )
    .join('');
  const models = table(
    ['', 'reference', 'model id', 'fingerprint'],
    [identityRow('base', m.models.base), identityRow('delivered', m.models.delivered)],
  );
  const sets = m.probeSets.length
    ? `<p class="muted">Probe sets: ${m.probeSets.map((p) => `<code>${e(p.id)}</code> <span class="mono">${e(shortHash(p.hash))}</span>`).join(', ')}</p>`
    : '';
  const run = [
    m.runStart ? `run started ${recLink(m.runStart)}` : '<span class="warn">no run.start record</span>',
    m.runEnd
      ? `run ended (${e(m.runEnd.status ?? 'complete')}) ${recLink(m.runEnd.ref)}`
      : '<span class="warn">no run.end record: the run did not finish</span>',
    m.manifest.present
      ? `manifest evidence root <span class="mono">${e(shortHash(m.manifest.evidenceRoot ?? '—'))}</span> ${m.manifest.evidenceRootRecord ? `= ${recLink(m.manifest.evidenceRootRecord)}` : ''}`
      : 'no manifest.json',
  ].join(' · ');
  return `<section id="summary"><h2>Summary</h2><div class="cards">${cards}</div><h3 style="margin-top:16px">Models</h3>${models}${sets}<p class="muted">${run}</p></section>`;
}

function familiesSection(m: ReportModel): string {
  if (m.families.length === 0)
    return '<section id="families"><h2>Families</h2><p class="muted">No family was scored or probed.</p></section>';
  const scored = m.families.filter((f) => f.score !== undefined);
  const chart = scored.length
    ? `<div class="chart">${intervalBarChart(
        scored.map((f, i) => ({
          label: f.family,
          value: f.score!,
          lo: f.ci?.[0],
          hi: f.ci?.[1],
          color: CHART_COLORS[i % CHART_COLORS.length],
          href: f.ref ? `#rec-${f.ref.seq}` : undefined,
        })),
        {
          title: 'Suspicion score per family (95% interval)',
          domain: [0, 1],
          width: 860,
          axisLabel: 'suspicion score (0 = like base, 1 = maximal)',
        },
      )}</div>`
    : '<p class="muted">No score records: families are listed from their exchanges only.</p>';
  const rows = m.families.map((f) => [
    `<b>${e(f.family)}</b>`,
    fmt(f.score, 3),
    f.ci ? `[${fmt(f.ci[0])}, ${fmt(f.ci[1])}]` : '—',
    `${f.coverage.ok}/${f.coverage.planned}${f.coverage.failed ? ` <span class="warn">(${f.coverage.failed} failed)</span>` : ''}`,
    String(f.findings),
    recLink(f.ref),
  ]);
  return `<section id="families"><h2>Families</h2>${chart}${table(['family', 'score', '95% CI', 'coverage ok/planned', 'findings', 'record'], rows, new Set([1, 2, 3, 4]))}</section>`;
}

function findingsSection(m: ReportModel): string {
  if (m.findings.length === 0)
    return '<section id="findings"><h2>Findings</h2><p class="muted">No finding records in the ledger.</p></section>';
  const chart = intervalBarChart(
    m.findings.map((f) => ({
      label: `${f.finding.family}/${f.finding.kind}`,
      value: f.finding.statistic.effect,
      lo: f.finding.statistic.ci[0],
      hi: f.finding.statistic.ci[1],
      color: SEVERITY_COLORS[f.finding.severity],
      note: f.finding.severity,
      href: `#finding-${anchorId(f.finding.id)}`,
    })),
    {
      title: 'Finding effects, delivered − base (95% interval)',
      domain: [-1, 1],
      reference: 0,
      width: 860,
      labelWidth: 250,
      valueWidth: 170,
      axisLabel: 'effect: delivered − base hit rate',
    },
  );
  return `<section id="findings"><h2>Findings</h2><div class="chart">${chart}</div>${m.findings.map(findingHtml).join('')}</section>`;
}

function judgesSection(m: ReportModel): string {
  const verdicts = ['flag', 'uncertain', 'clear'] as const;
  if (m.judges.length === 0)
    return '<section id="judges"><h2>Judge verdicts</h2><p class="muted">No judge records.</p></section>';
  const chart = stripPlot(
    verdicts.map((verdict, i) => ({
      label: verdict,
      values: m.judges.flatMap((j) =>
        j.record.verdict === verdict && j.record.confidence !== undefined ? [j.record.confidence] : [],
      ),
      color: [SEVERITY_COLORS.high, CHART_COLORS[4], CHART_COLORS[2]][i]!,
    })),
    { title: 'Judge confidence by verdict', domain: [0, 1], width: 860, axisLabel: 'judge confidence' },
  );
  const rows = m.judges.map((j) => [
    `<code>${e(j.exchangeId)}</code>`,
    `<b>${e(j.record.verdict)}</b>${j.record.uncertainReason ? ` (${e(j.record.uncertainReason)})` : ''}`,
    e(j.record.severity ?? '—'),
    fmt(j.record.confidence, 2),
    e(j.record.judgeRef ?? '—'),
    recLink(j.ref),
  ]);
  return `<section id="judges"><h2>Judge verdicts</h2><div class="chart">${chart}</div>${table(['exchange', 'verdict', 'severity', 'confidence', 'judge', 'record'], rows, new Set([3]))}</section>`;
}

function gateSection(m: ReportModel): string {
  const g = m.gate;
  const t = g.transition;
  const history = g.history.length
    ? table(
        ['record', 'from', 'to'],
        g.history.map((h) => [recLink(h.ref), e(h.from ?? '—'), `<b>${e(h.to)}</b>`]),
      )
    : '<p class="muted">No transitions recorded.</p>';
  const root = t?.evidenceRoot
    ? `<p>Evidence root of the decision: <span class="mono">${e(t.evidenceRoot)}</span> ${t.evidenceRootRecord ? `= hash of record ${recLink(t.evidenceRootRecord)}` : '<span class="muted">(not a ledger record hash)</span>'}</p>`
    : '';
  const cap = t?.capabilityId ? `<p>Release capability <code>${e(t.capabilityId)}</code></p>` : '';
  const list = (title: string, items: ReportModel['triggers']) =>
    items.length
      ? `<h3>${title}</h3><ul>${items.map((i) => `<li>${htmlText(i.summary)} ${recLink(i.ref)}</li>`).join('')}</ul>`
      : '';
  return `<section id="gate"><h2>Gate</h2>${history}${root}${cap}${list('Overrides', m.overrides)}${list('Release records', m.releases)}${list('Trigger search', m.triggers)}</section>`;
}

function failuresSection(m: ReportModel): string {
  const f = m.failures;
  const cov = m.families.map((x) => `${e(x.family)} ${x.coverage.ok}/${x.coverage.planned}`).join(' · ');
  const failed = f.exchanges.length
    ? table(
        ['exchange', 'family', 'side', 'failure', 'record'],
        f.exchanges.map((x) => [
          `<code>${e(x.id)}</code>`,
          e(x.family),
          e(x.side),
          htmlText(x.failure),
          recLink(x.ref),
        ]),
      ) +
      (f.total > f.exchanges.length
        ? `<p class="muted">${f.total - f.exchanges.length} more failed exchanges not listed.</p>`
        : '')
    : '<p>No failed exchanges.</p>';
  const unreadable = f.unreadable.length
    ? `<h3 class="warn">Unreadable records (${f.unreadable.length})</h3>${table(
        ['record', 'problem'],
        f.unreadable.map((u) => [recLink(u.ref), htmlText(u.reason)]),
      )}`
    : '';
  return `<section id="failures"><h2>Failures &amp; coverage</h2><p>Coverage (ok/planned): ${cov || '—'}. Failed exchanges count as missing evidence, never as passes.</p>${failed}${unreadable}</section>`;
}

function appendixSection(m: ReportModel): string {
  const rows = m.appendix.map(
    (r) =>
      `<tr id="rec-${r.seq}"><td class="num">#${r.seq}</td><td>${e(r.kind)}</td><td class="num">${e(r.ts)}</td><td class="mono">${e(r.hash)}</td></tr>`,
  );
  return `<section id="records"><h2>Ledger records cited</h2><p class="muted">${m.appendix.length} of ${m.ledger.records} records; hashes are sha256 over each record's canonical JSON, chained to the previous one.</p><table><thead><tr><th>seq</th><th>kind</th><th>time</th><th>sha256</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
}
