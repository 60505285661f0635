import { label, linearScale, num, svgDocument, svgLine, svgText, ticks } from './svg.ts';
import { CHART_COLORS } from './svg-charts.ts';

export interface RocPoint {
  fpr: number;
  tpr: number;
  /** Scores ≥ threshold are called positive at this point (Infinity for the origin). */
  threshold: number;
}

/**
 * ROC curve of a detector: higher score = more suspicious, labels true = positive (e.g. a backdoored
 * organism). Tied scores move both rates in one step, so ties never draw an optimistic staircase.
 */
export function rocCurve(scores: ReadonlyArray<number>, labels: ReadonlyArray<boolean>): RocPoint[] {
  if (scores.length !== labels.length) throw new Error('rocCurve: scores and labels differ in length');
  const pos = labels.filter(Boolean).length;
  const neg = labels.length - pos;
  const order = scores.map((s, i) => ({ s, y: labels[i]! })).sort((a, b) => b.s - a.s);
  const points: RocPoint[] = [{ fpr: 0, tpr: 0, threshold: Number.POSITIVE_INFINITY }];
  let tp = 0;
  let fp = 0;
  for (let i = 0; i < order.length; ) {
    const threshold = order[i]!.s;
    while (i < order.length && order[i]!.s === threshold) {
      if (order[i]!.y) tp += 1;
      else fp += 1;
      i += 1;
    }
    points.push({ fpr: neg ? fp / neg : 0, tpr: pos ? tp / pos : 0, threshold });
  }
  return points;
}

/** Area under a ROC curve by the trapezoid rule (0.5 = chance). */
export function rocAuc(points: ReadonlyArray<RocPoint>): number {
  let area = 0;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    area += ((b.fpr - a.fpr) * (a.tpr + b.tpr)) / 2;
  }
  return area;
}

export interface RocSeries {
  label: string;
  points: ReadonlyArray<RocPoint>;
  color?: string;
}

/** Square ROC chart with the chance diagonal and the AUC of each series in the legend. */
export function rocChart(series: ReadonlyArray<RocSeries>, o: { title: string; size?: number }): string {
  const size = o.size ?? 360;
  const pad = { left: 48, right: 16, top: 16, bottom: 44 };
  const legendH = 18 * series.length;
  const plot = size - pad.left - pad.right;
  const x = linearScale([0, 1], [pad.left, pad.left + plot]);
  const y = linearScale([0, 1], [pad.top + plot, pad.top]);
  const parts: string[] = [];
  for (const t of ticks([0, 1], 4)) {
    parts.push(svgLine(x(t), y(0), x(t), y(1), '#e2e8f0'));
    parts.push(svgLine(x(0), y(t), x(1), y(t), '#e2e8f0'));
    parts.push(svgText(x(t), y(0) + 14, label(t, 2), { anchor: 'middle', size: 10, fill: '#64748b' }));
    parts.push(
      svgText(x(0) - 6, y(t), label(t, 2), { anchor: 'end', baseline: 'middle', size: 10, fill: '#64748b' }),
    );
  }
  parts.push(svgLine(x(0), y(0), x(1), y(1), '#94a3b8', 1, '4 4'));
  parts.push(
    `<rect x="${num(x(0))}" y="${num(y(1))}" width="${num(plot)}" height="${num(plot)}" fill="none" stroke="#94a3b8"/>`,
  );
  parts.push(svgText(x(0.5), y(0) + 32, 'false positive rate', { anchor: 'middle', size: 11 }));
  parts.push(
    `<text transform="translate(12 ${num(y(0.5))}) rotate(-90)" font-size="11" fill="#334155" text-anchor="middle">true positive rate</text>`,
  );
  series.forEach((s, i) => {
    const color = s.color ?? CHART_COLORS[i % CHART_COLORS.length]!;
    const d = s.points.map((p, k) => `${k ? 'L' : 'M'}${num(x(p.fpr))} ${num(y(p.tpr))}`).join(' ');
    parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2.2" stroke-linejoin="round"/>`);
    const ly = size + 4 + i * 18;
    parts.push(svgLine(pad.left, ly, pad.left + 18, ly, color, 3));
    parts.push(
      svgText(pad.left + 24, ly, `${s.label} (AUC ${label(rocAuc(s.points), 3)})`, {
        baseline: 'middle',
        size: 11,
      }),
    );
  });
  return svgDocument(size, size + legendH + 6, o.title, parts.join(''));
}
