import type { ExchangeView, FindingView, RecordRef } from './model.ts';
import type { ExchangePayload, JudgePayload } from './schemas.ts';
import { countUnusual, escapeHtml as e, htmlText, shortHash } from './text.ts';

type Reply = ExchangePayload['base'];
type Message = { role: string; content: string };

/** A link to the ledger record behind a claim (anchor in the records appendix). */
export function recLink(ref: RecordRef | undefined): string {
  if (!ref) return '<span class="muted">—</span>';
  return `<a class="rec" href="#rec-${ref.seq}" title="${e(`${ref.kind} record, sha256 ${ref.hash}`)}">#${ref.seq}·${e(shortHash(ref.hash, 8))}</a>`;
}

export function fmt(v: number | undefined, digits = 3): string {
  return v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits);
}

export function fmtP(v: number): string {
  return v < 0.001 ? v.toExponential(1) : v.toFixed(3);
}

export function messagesHtml(messages: ReadonlyArray<Message>): string {
  return messages
    .map(
      (m) => `<div class="msg"><span class="role">${e(m.role)}</span><pre>${htmlText(m.content)}</pre></div>`,
    )
    .join('');
}

function replyHtml(side: 'base' | 'delivered', r: Reply): string {
  const title = side === 'base' ? 'Base model' : 'Delivered model';
  if (r.status === 'failed') {
    const why = `${r.failure?.kind ?? 'failed'}${r.failure?.message ? `: ${r.failure.message}` : ''}`;
    return `<div class="reply ${side}"><h4>${title}</h4><div class="failed">No reply — ${htmlText(why)} (${r.attempts} attempt${r.attempts === 1 ? '' : 's'})</div></div>`;
  }
  const text = r.text ?? '';
  const unusual = countUnusual(text) + countUnusual(r.reasoning ?? '');
  const notes = [
    r.finishReason === 'length' ? '<span class="warn">cut off at max tokens</span>' : '',
    unusual
      ? `<span class="warn">${unusual} unusual character${unusual === 1 ? '' : 's'} marked ⟦…⟧</span>`
      : '',
    r.cached ? '<span class="muted">from response cache</span>' : '',
  ].filter(Boolean);
  const reasoning = r.reasoning
    ? `<details><summary>reasoning (${[...r.reasoning].length} chars)</summary><pre>${htmlText(r.reasoning)}</pre></details>`
    : '';
  return (
    `<div class="reply ${side}"><h4>${title}</h4>${reasoning}<pre>${htmlText(text)}</pre>` +
    (notes.length ? `<div class="judge" style="padding:0 10px 6px">${notes.join(' · ')}</div>` : '') +
    '</div>'
  );
}

export function judgeLine(j: { ref?: RecordRef; record: JudgePayload } | undefined): string {
  if (!j) return '<div class="judge">Judge: not judged</div>';
  const r = j.record;
  const facts = [
    r.uncertainReason ? `<b>${e(r.verdict)}</b> (${e(r.uncertainReason)})` : `<b>${e(r.verdict)}</b>`,
    `severity ${e(r.severity ?? '—')}`,
    `confidence ${fmt(r.confidence, 2)}`,
    r.judgeRef ? e(r.judgeRef) : '',
    r.rubricHash ? `rubric <span class="mono">${e(shortHash(r.rubricHash, 10))}</span>` : '',
  ].filter(Boolean);
  const rationale = r.rationale
    ? `<details><summary>judge rationale (model text)</summary><pre>${htmlText(r.rationale)}</pre></details>`
    : '';
  return `<div class="judge">Judge ${facts.join(' · ')} ${j.ref ? recLink(j.ref) : ''}</div>${rationale}`;
}

/** One exchange side by side; its prompt collapses when it is the finding's reproducer, shown above. */
export function exchangeHtml(x: ExchangeView, reproducer?: ReadonlyArray<Message>): string {
  const ex = x.exchange;
  const same = reproducer !== undefined && JSON.stringify(reproducer) === JSON.stringify(ex.messages);
  const prompt = same
    ? `<details class="prompt"><summary>prompt: same as the reproducer (${ex.messages.length} messages)</summary>${messagesHtml(ex.messages)}</details>`
    : messagesHtml(ex.messages);
  return (
    `<details open class="exchange"><summary>Exchange <code>${e(ex.id)}</code> · variant <code>${e(ex.variant)}</code> · sample ${ex.sample} ${recLink(x.ref)}</summary>` +
    `${prompt}<div class="pair">${replyHtml('base', ex.base)}${replyHtml('delivered', ex.delivered)}</div>` +
    `${judgeLine(x.judge)}</details>`
  );
}

export function findingHtml(f: FindingView): string {
  const x = f.finding;
  const s = x.statistic;
  const overrides = f.overrides.length
    ? `<div class="judge">Overridden by ${f.overrides.map(recLink).join(', ')}</div>`
    : '';
  const reproducer = x.reproducer
    ? `<h4 style="margin-top:10px">Minimal reproducer · variant <code>${e(x.reproducer.variant)}</code></h4>${messagesHtml(x.reproducer.messages)}`
    : '<p class="muted">No minimal reproducer recorded.</p>';
  const missing = f.missingExchanges.length
    ? `<p class="warn">Exchanges cited but absent from the ledger: ${f.missingExchanges.map((id) => `<code>${e(id)}</code>`).join(', ')}</p>`
    : '';
  const more =
    x.exchangeIds.length > f.exchanges.length + f.missingExchanges.length
      ? `<p class="muted">${x.exchangeIds.length} supporting exchanges in all; ${f.exchanges.length} shown.</p>`
      : '';
  return (
    `<article class="finding ${e(x.severity)}" id="finding-${e(anchorId(x.id))}">` +
    `<h3><span class="badge sev-${e(x.severity)}">${e(x.severity)}</span> ${htmlText(x.title)}</h3>` +
    `<div class="ids"><code>${e(x.id)}</code> · family <b>${e(x.family)}</b> · kind <code>${e(x.kind)}</code> · recorded ${recLink(f.ref)}</div>` +
    `<div class="stats"><span>${e(s.name)}: effect <b>${fmt(s.effect)}</b> [${fmt(s.ci[0])}, ${fmt(s.ci[1])}]</span>` +
    `<span>hits base <b>${s.hitsBase}</b>/${s.n} → delivered <b>${s.hitsDelivered}</b>/${s.n}</span>` +
    `<span>p <b>${fmtP(s.pValue)}</b> · q (BH) <b>${fmtP(s.qValue)}</b></span></div>` +
    `${overrides}${reproducer}${f.exchanges.map((ex) => exchangeHtml(ex, x.reproducer?.messages)).join('')}${missing}${more}</article>`
  );
}

/** Finding ids contain ':'; anchors keep only safe characters. */
export function anchorId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_');
}

export function table(head: string[], rows: string[][], numeric: ReadonlySet<number> = new Set()): string {
  const th = head.map((h) => `<th>${e(h)}</th>`).join('');
  const body = rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => (numeric.has(i) ? `<td class="num">${c}</td>` : `<td>${c}</td>`)).join('')}</tr>`,
    )
    .join('');
  return `<table><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}
