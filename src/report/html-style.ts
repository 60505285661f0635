import type { Severity } from '../contracts/exchange.ts';
import type { Tone } from './model.ts';

export const TONE_COLORS: Record<Tone, { bg: string; fg: string }> = {
  ok: { bg: '#166534', fg: '#ffffff' },
  warn: { bg: '#b45309', fg: '#ffffff' },
  bad: { bg: '#b91c1c', fg: '#ffffff' },
  neutral: { bg: '#475569', fg: '#ffffff' },
};

export const SEVERITY_COLORS: Record<Severity, string> = {
  critical: '#7f1d1d',
  high: '#dc2626',
  medium: '#ea580c',
  low: '#ca8a04',
  info: '#64748b',
};

/** The report's only stylesheet, inlined: the page loads nothing from anywhere. */
export function reportCss(tone: Tone): string {
  const t = TONE_COLORS[tone];
  const sev = Object.entries(SEVERITY_COLORS)
    .map(([s, c]) => `.sev-${s}{background:${c}}`)
    .join('');
  return `
:root{--ink:#0f172a;--muted:#475569;--line:#e2e8f0;--soft:#f8fafc;--accent:#1d4ed8}
*{box-sizing:border-box}
body{margin:0;font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:#f1f5f9}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:13px}
.banner{background:${t.bg};color:${t.fg};padding:28px 40px 24px}
.banner a{color:${t.fg};text-decoration:underline}
.banner .eyebrow{text-transform:uppercase;letter-spacing:.08em;font-size:12px;opacity:.85;font-weight:600}
.banner h1{margin:4px 0 6px;font-size:34px;line-height:1.15;letter-spacing:-.01em}
.banner .meta{opacity:.92;font-size:14px}
.banner ul{margin:10px 0 0;padding-left:20px}
.caveat{margin-top:12px;background:rgba(0,0,0,.22);border-radius:6px;padding:8px 12px;font-size:14px}
main{max-width:1180px;margin:0 auto;padding:20px 32px 60px}
nav.toc{display:flex;flex-wrap:wrap;gap:6px 18px;font-size:14px;margin:0 0 18px}
section{background:#fff;border:1px solid var(--line);border-radius:10px;padding:20px 24px;margin:0 0 20px}
h2{font-size:20px;margin:0 0 12px}h3{font-size:16px;margin:0 0 6px}section>h3{margin-top:18px}h4{font-size:13px;margin:0 0 6px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:12px}
.card{background:var(--soft);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card .k{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.06em}.card .v{font-size:24px;font-weight:650}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);font-weight:600}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.badge{display:inline-block;color:#fff;border-radius:999px;padding:1px 10px;font-size:12px;font-weight:650;text-transform:uppercase;letter-spacing:.04em}
${sev}
.finding{border:1px solid var(--line);border-left:6px solid var(--line);border-radius:8px;padding:14px 16px;margin:14px 0}
.finding.critical{border-left-color:${SEVERITY_COLORS.critical}}.finding.high{border-left-color:${SEVERITY_COLORS.high}}
.finding.medium{border-left-color:${SEVERITY_COLORS.medium}}.finding.low{border-left-color:${SEVERITY_COLORS.low}}
.finding .ids{color:var(--muted);font-size:13px}
.stats{display:flex;flex-wrap:wrap;gap:6px 22px;margin:8px 0;font-size:14px}
.stats b{font-variant-numeric:tabular-nums}
.msg{border:1px solid var(--line);border-radius:6px;margin:6px 0;background:var(--soft)}
.msg .role{display:block;font-size:11px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);padding:4px 10px 0}
pre{margin:0;padding:6px 10px 8px;white-space:pre-wrap;word-break:break-word}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px;margin:10px 0}
.reply{border:1px solid var(--line);border-radius:6px;overflow:hidden}
.reply h4{margin:0;padding:6px 10px;background:var(--soft);border-bottom:1px solid var(--line)}
.reply.delivered h4{background:#eff6ff}
.reply .failed{color:#b91c1c;padding:6px 10px}
.uc{background:#fde68a;color:#7c2d12;border-radius:3px;padding:0 2px;font-size:11px;font-weight:700}
.warn{color:#92400e}
.judge{font-size:13px;color:var(--muted);margin:4px 0}
.chart{overflow-x:auto;margin:6px 0 12px}
.chart svg{max-width:100%;height:auto}
.exchange{border-top:1px dashed var(--line);margin-top:10px;padding-top:6px}
.exchange>summary{font-size:14px;color:var(--ink);padding:4px 0}
details summary{cursor:pointer;color:var(--muted);font-size:13px;padding:2px 10px}
.rec{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;white-space:nowrap}
tr:target,.finding:target{background:#fef9c3}
.muted{color:var(--muted)}
footer{color:var(--muted);font-size:12px;text-align:center;padding:0 0 30px}
@media print{body{background:#fff}section{break-inside:avoid-page}}
`;
}
