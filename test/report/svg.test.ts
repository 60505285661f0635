import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/util/escape-html.ts';
import { linearScale, tickLabel } from '../../src/util/svg.ts';
import { intervalBarChart, median, stripPlot } from '../../src/util/svg-charts.ts';
import { rocAuc, rocChart, rocCurve } from '../../src/util/svg-roc.ts';

/** Chart helpers live in src/util (shared with bench/); their tests sit with the report that uses them. */
describe('svg helpers', () => {
  it('scales linearly and clamps to the domain', () => {
    const x = linearScale([0, 1], [100, 500]);
    expect([x(0), x(0.5), x(1), x(2), x(-1), x(Number.NaN)]).toEqual([100, 300, 500, 500, 100, 100]);
    expect(linearScale([-1, 1], [0, 200])(0)).toBe(100);
    expect([tickLabel(0.25), tickLabel(1), tickLabel(-0.5)]).toEqual(['0.25', '1', '-0.5']);
  });

  it('interval bars: one bar and one whisker per row, positions follow the values, labels escaped', () => {
    const svg = intervalBarChart(
      [
        { label: 'triggers', value: 0.8, lo: 0.6, hi: 0.9, href: '#rec-3' },
        { label: '<script>', value: 0.2 },
      ],
      { title: 'scores & intervals', width: 600, labelWidth: 100, valueWidth: 100 },
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('<title>scores &amp; intervals</title>');
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('&lt;script&gt;');
    const rects = [...svg.matchAll(/<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/g)].map((m) => [
      Number(m[1]),
      Number(m[2]),
    ]);
    // Plot spans x 100..500: 0.8 → width 320, 0.2 → width 80, both from x=100.
    expect(rects).toEqual([
      [100, 320],
      [100, 80],
    ]);
    expect(svg).toContain('<a href="#rec-3">');
    expect(svg).toContain('0.80 [0.60, 0.90]');
  });

  it('interval bars diverge from a reference line', () => {
    const svg = intervalBarChart([{ label: 'neg', value: -0.5 }], {
      title: 't',
      domain: [-1, 1],
      reference: 0,
      width: 600,
      labelWidth: 100,
      valueWidth: 100,
    });
    const [x, w] = [...svg.matchAll(/<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/g)].map((m) => [
      Number(m[1]),
      Number(m[2]),
    ])[0]!;
    expect([x, w]).toEqual([200, 100]);
  });

  it('strip plot draws every point (thinned beyond the cap) and reports n and the median', () => {
    const svg = stripPlot(
      [
        { label: 'flag', values: [0.2, 0.4, 0.9] },
        { label: 'clear', values: Array.from({ length: 50 }, (_, i) => i / 50) },
      ],
      { title: 'confidence', maxPoints: 10 },
    );
    expect((svg.match(/<circle /g) ?? []).length).toBe(3 + 10);
    expect(svg).toContain('n=3 med 0.40');
    expect(svg).toContain('n=50 med 0.49');
    expect(median([3, 1, 2, 4])).toBe(2.5);
    expect(median([])).toBeUndefined();
  });

  it('ROC: perfect, inverted and tied detectors', () => {
    const labels = [true, true, false, false];
    expect(rocAuc(rocCurve([0.9, 0.8, 0.2, 0.1], labels))).toBe(1);
    expect(rocAuc(rocCurve([0.1, 0.2, 0.8, 0.9], labels))).toBe(0);
    const tied = rocCurve([0.5, 0.5, 0.5, 0.5], labels);
    expect(tied).toEqual([
      { fpr: 0, tpr: 0, threshold: Number.POSITIVE_INFINITY },
      { fpr: 1, tpr: 1, threshold: 0.5 },
    ]);
    expect(rocAuc(tied)).toBe(0.5);
    expect(rocAuc(rocCurve([0.9, 0.3, 0.6, 0.1], labels))).toBe(0.75);
    expect(() => rocCurve([1], [])).toThrow(/differ in length/);
  });

  it('ROC chart has a path per series and the AUC in its legend', () => {
    const svg = rocChart(
      [{ label: 'judge <v2>', points: rocCurve([0.9, 0.3, 0.6, 0.1], [true, true, false, false]) }],
      { title: 'ROC' },
    );
    expect((svg.match(/<path /g) ?? []).length).toBe(1);
    expect(svg).toContain('judge &lt;v2&gt; (AUC 0.750)');
    expect(escapeHtml('"\'')).toBe('&quot;&#39;');
  });
});
