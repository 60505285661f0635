import { escapeHtml } from './escape-html.ts';
import { label, linearScale, num, svgDocument, svgLine, svgText, svgValueAxis } from './svg.ts';

/** Palette readable on white and by the common colour-vision deficiencies (Okabe–Ito based). */
export const CHART_COLORS = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9'] as const;

export interface IntervalBar {
  label: string;
  value: number;
  /** Interval (e.g. 95% CI); drawn as a whisker when both ends are given. */
  lo?: number;
  hi?: number;
  color?: string;
  /** Shown after the value, e.g. "n=120". */
  note?: string;
  /** Makes the row a link (e.g. "#rec-12" to the ledger record behind the number). */
  href?: string;
}

export interface IntervalBarOptions {
  title: string;
  domain?: [number, number];
  /** Bars grow from here (default: the lower end of the domain; 0 for a diverging chart). */
  reference?: number;
  width?: number;
  rowHeight?: number;
  labelWidth?: number;
  /** Room right of the plot for the value text. */
  valueWidth?: number;
  digits?: number;
  axisLabel?: string;
}

/** Horizontal bars with interval whiskers: per-family scores with CIs, or finding effects (forest plot). */
export function intervalBarChart(bars: ReadonlyArray<IntervalBar>, o: IntervalBarOptions): string {
  const width = o.width ?? 640;
  const rowH = o.rowHeight ?? 30;
  const labelW = o.labelWidth ?? 150;
  const valueW = o.valueWidth ?? 150;
  const top = 12;
  const plotBottom = top + Math.max(1, bars.length) * rowH;
  const height = plotBottom + (o.axisLabel ? 40 : 26);
  const domain = o.domain ?? [0, 1];
  const ref = o.reference ?? domain[0];
  const x = linearScale(domain, [labelW, width - valueW]);
  const digits = o.digits ?? 2;
  const parts: string[] = [svgValueAxis(x, domain, top, plotBottom, domain[1] - domain[0] === 1 ? 5 : 4)];
  if (ref !== domain[0]) parts.push(svgLine(x(ref), top - 4, x(ref), plotBottom, '#475569', 1.2));
  bars.forEach((b, i) => {
    const color = b.color ?? CHART_COLORS[0];
    const cy = top + i * rowH + rowH / 2;
    const barH = Math.min(16, rowH - 10);
    const x0 = Math.min(x(ref), x(b.value));
    const w = Math.max(1, Math.abs(x(b.value) - x(ref)));
    const row: string[] = [
      svgText(labelW - 10, cy, truncate(b.label, Math.floor(labelW / 7)), {
        anchor: 'end',
        baseline: 'middle',
        size: 12,
      }),
      `<rect x="${num(x0)}" y="${num(cy - barH / 2)}" width="${num(w)}" height="${num(barH)}" rx="2" fill="${color}" fill-opacity="0.78"/>`,
    ];
    if (b.lo !== undefined && b.hi !== undefined) {
      const [lo, hi] = [x(b.lo), x(b.hi)];
      row.push(svgLine(lo, cy, hi, cy, '#0f172a', 1.5));
      row.push(svgLine(lo, cy - 6, lo, cy + 6, '#0f172a', 1.5));
      row.push(svgLine(hi, cy - 6, hi, cy + 6, '#0f172a', 1.5));
    }
    const interval =
      b.lo !== undefined && b.hi !== undefined ? ` [${label(b.lo, digits)}, ${label(b.hi, digits)}]` : '';
    const text = `${label(b.value, digits)}${interval}${b.note ? ` ${b.note}` : ''}`;
    row.push(svgText(width - valueW + 8, cy, text, { baseline: 'middle', size: 11, fill: '#0f172a' }));
    const content = `<title>${escapeHtml(`${b.label}: ${text}`)}</title>${row.join('')}`;
    parts.push(b.href ? `<a href="${escapeHtml(b.href)}">${content}</a>` : `<g>${content}</g>`);
  });
  if (bars.length === 0)
    parts.push(svgText(width / 2, top + rowH / 2, 'no data', { anchor: 'middle', baseline: 'middle' }));
  if (o.axisLabel)
    parts.push(
      svgText((labelW + width - valueW) / 2, height - 6, o.axisLabel, {
        anchor: 'middle',
        size: 11,
        fill: '#475569',
      }),
    );
  return svgDocument(width, height, o.title, parts.join(''));
}

export interface StripGroup {
  label: string;
  values: ReadonlyArray<number>;
  color?: string;
}

export interface StripPlotOptions {
  title: string;
  domain?: [number, number];
  width?: number;
  rowHeight?: number;
  labelWidth?: number;
  axisLabel?: string;
  /** Points drawn per group at most (deterministic thinning beyond it keeps files small). */
  maxPoints?: number;
}

/** One row of jittered points per group, with the median marked: a score distribution at a glance. */
export function stripPlot(groups: ReadonlyArray<StripGroup>, o: StripPlotOptions): string {
  const width = o.width ?? 640;
  const rowH = o.rowHeight ?? 42;
  const labelW = o.labelWidth ?? 150;
  const right = 90;
  const top = 12;
  const plotBottom = top + Math.max(1, groups.length) * rowH;
  const height = plotBottom + (o.axisLabel ? 40 : 26);
  const domain = o.domain ?? [0, 1];
  const x = linearScale(domain, [labelW, width - right]);
  const maxPoints = o.maxPoints ?? 1500;
  const parts: string[] = [svgValueAxis(x, domain, top, plotBottom, domain[1] - domain[0] === 1 ? 5 : 4)];
  groups.forEach((g, i) => {
    const color = g.color ?? CHART_COLORS[i % CHART_COLORS.length];
    const cy = top + i * rowH + rowH / 2;
    const values = g.values.filter(Number.isFinite);
    const stride = Math.max(1, Math.ceil(values.length / maxPoints));
    parts.push(
      svgText(labelW - 10, cy, truncate(g.label, Math.floor(labelW / 7)), {
        anchor: 'end',
        baseline: 'middle',
      }),
    );
    const dots: string[] = [];
    for (let k = 0; k < values.length; k += stride) {
      // Golden-ratio sequence: even, deterministic jitter (same input, same picture).
      const jitter = (((k * 0.618033988749895) % 1) - 0.5) * (rowH - 14);
      dots.push(`<circle cx="${num(x(values[k]!))}" cy="${num(cy + jitter)}" r="3.2"/>`);
    }
    parts.push(
      `<g fill="${color}" fill-opacity="0.55" stroke="${color}" stroke-width="0.6">${dots.join('')}</g>`,
    );
    const med = median(values);
    if (med !== undefined) {
      parts.push(svgLine(x(med), cy - rowH / 2 + 4, x(med), cy + rowH / 2 - 4, '#0f172a', 2));
      parts.push(
        svgText(width - right + 8, cy, `n=${values.length} med ${label(med)}`, {
          baseline: 'middle',
          size: 11,
        }),
      );
    } else {
      parts.push(svgText(width - right + 8, cy, 'n=0', { baseline: 'middle', size: 11 }));
    }
  });
  if (o.axisLabel)
    parts.push(
      svgText((labelW + width - right) / 2, height - 6, o.axisLabel, {
        anchor: 'middle',
        size: 11,
        fill: '#475569',
      }),
    );
  return svgDocument(width, height, o.title, parts.join(''));
}

export function median(values: ReadonlyArray<number>): number | undefined {
  if (values.length === 0) return undefined;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}
