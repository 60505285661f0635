import { escapeHtml } from './escape-html.ts';

/**
 * Minimal SVG building blocks shared by the charts in svg-charts.ts / svg-roc.ts. Pure functions returning
 * strings: no DOM, no dependency, every text node escaped, so a chart can be inlined in a self-contained
 * HTML report or written to a .svg file by the benchmarks.
 */

/** A number for an SVG attribute: finite, at most 2 decimals. */
export function num(v: number): string {
  if (!Number.isFinite(v)) return '0';
  return String(Math.round(v * 100) / 100);
}

/** A number for a human label. */
export function label(v: number, digits = 2): string {
  if (!Number.isFinite(v)) return '–';
  return v.toFixed(digits);
}

/** A tick label: up to 2 decimals, trailing zeros dropped (0.25, 0.5, 1). */
export function tickLabel(v: number): string {
  return Number.isFinite(v) ? String(Number(v.toFixed(2))) : '–';
}

/** Maps [d0, d1] linearly onto [r0, r1], clamping to the domain. */
export function linearScale(domain: [number, number], range: [number, number]): (v: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  return (v: number) => {
    const clamped = Math.min(Math.max(Number.isFinite(v) ? v : d0, Math.min(d0, d1)), Math.max(d0, d1));
    return r0 + ((clamped - d0) / span) * (r1 - r0);
  };
}

/** Evenly spaced ticks including both ends. */
export function ticks(domain: [number, number], count: number): number[] {
  const out: number[] = [];
  const steps = Math.max(1, count);
  for (let i = 0; i <= steps; i++) out.push(domain[0] + ((domain[1] - domain[0]) * i) / steps);
  return out;
}

export interface SvgTextOptions {
  anchor?: 'start' | 'middle' | 'end';
  size?: number;
  weight?: number;
  fill?: string;
  /** Vertical alignment relative to y. */
  baseline?: 'middle' | 'auto' | 'hanging';
}

export function svgText(x: number, y: number, text: string, o: SvgTextOptions = {}): string {
  const attrs = [
    `x="${num(x)}"`,
    `y="${num(y)}"`,
    `font-size="${o.size ?? 12}"`,
    `fill="${o.fill ?? '#334155'}"`,
    `text-anchor="${o.anchor ?? 'start'}"`,
  ];
  if (o.weight) attrs.push(`font-weight="${o.weight}"`);
  if (o.baseline && o.baseline !== 'auto') attrs.push(`dominant-baseline="${o.baseline}"`);
  return `<text ${attrs.join(' ')}>${escapeHtml(text)}</text>`;
}

export function svgLine(
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  stroke: string,
  width = 1,
  dash?: string,
) {
  const d = dash ? ` stroke-dasharray="${dash}"` : '';
  return `<line x1="${num(x1)}" y1="${num(y1)}" x2="${num(x2)}" y2="${num(y2)}" stroke="${stroke}" stroke-width="${num(width)}"${d}/>`;
}

/** Wraps chart content in a standalone, accessible <svg> element (title read by screen readers). */
export function svgDocument(width: number, height: number, title: string, body: string): string {
  const t = escapeHtml(title);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${num(width)} ${num(height)}" width="${num(width)}" ` +
    `height="${num(height)}" role="img" aria-label="${t}" font-family="system-ui, -apple-system, 'Segoe UI', ` +
    `Roboto, 'Helvetica Neue', Arial, sans-serif"><title>${t}</title>${body}</svg>`
  );
}

/** A horizontal value axis with grid lines, for charts whose categories run down the y axis. */
export function svgValueAxis(
  scale: (v: number) => number,
  domain: [number, number],
  top: number,
  bottom: number,
  tickCount: number,
): string {
  const parts: string[] = [];
  for (const t of ticks(domain, tickCount)) {
    const x = scale(t);
    parts.push(svgLine(x, top, x, bottom, '#e2e8f0'));
    parts.push(svgText(x, bottom + 14, tickLabel(t), { anchor: 'middle', size: 11, fill: '#64748b' }));
  }
  return parts.join('');
}
