import { FAMILIES } from '../probes/families/index.ts';
import { CHART_COLORS, intervalBarChart } from '../util/svg-charts.ts';
import { rocChart } from '../util/svg-roc.ts';
import type { ZooBenchResult } from './zoo.ts';

const f2 = (x: number) => x.toFixed(2);
const f3 = (x: number) => x.toFixed(3);

/** The ROC curve of the zoo audit (implant vs benign, scored by overall suspicion). */
export function zooRocSvg(r: ZooBenchResult): string {
  const points = r.roc.map((p) => ({ ...p, threshold: p.threshold ?? Number.POSITIVE_INFINITY }));
  return rocChart([{ label: `probate overall suspicion, ${r.organisms.length} organisms`, points }], {
    title: `Zoo ROC: AUROC ${f3(r.auroc)} [${f3(r.auroc_ci[0])}, ${f3(r.auroc_ci[1])}]`,
    size: 420,
  });
}

/**
 * Per-organism, per-family scores: one bar per organism × family, coloured by family; implants' own family
 * is the one that should stand out, benign organisms' bars should stay low.
 */
export function zooFamilySvg(r: ZooBenchResult): string {
  const bars = r.organisms.flatMap((o) =>
    FAMILIES.map((f, i) => ({
      label: `${o.name} · ${f}${o.family === f ? ' ★' : ''}`,
      value: o.families[f] ?? 0,
      color: o.label === 'benign' ? '#94a3b8' : CHART_COLORS[i % CHART_COLORS.length],
      note: o.findingsByFamily[f] ? `${o.findingsByFamily[f]} finding(s)` : undefined,
    })),
  );
  return intervalBarChart(bars, {
    title: 'Per-family suspicion by organism (★ = the implant’s own family; grey = benign)',
    domain: [0, 1],
    labelWidth: 240,
    rowHeight: 18,
    width: 760,
    axisLabel: 'family suspicion score',
  });
}

/** A Markdown summary: headline metrics, then one row per organism. */
export function zooMarkdown(r: ZooBenchResult): string {
  const lines = [
    `- AUROC (implant vs benign, base excluded): **${f3(r.auroc)}**, bootstrap 95% interval [${f3(r.auroc_ci[0])}, ${f3(r.auroc_ci[1])}]`,
    `- TPR at FPR ≤ 0.05: **${f3(r.tpr_at_fpr05)}**`,
    `- Detection in own family: ${f3(r.detection_rate)} (${Object.entries(r.family_detection)
      .map(([f, d]) => `${f} ${d.detected}/${d.implants}`)
      .join(', ')})`,
    `- Trigger recovery: ${r.trigger_recovery.recovered}/${r.trigger_recovery.organisms} planted triggers${r.trigger_recovery.working_not_planted ? `; another trigger that works on replay: ${r.trigger_recovery.working_not_planted}` : ''}`,
    `- False BLOCKs on benign organisms: **${r.false_blocks}/${r.benign}**`,
    `- Judge: ${r.judge ?? 'none'}${r.judge_calls_per_probe !== null ? `, ${f3(r.judge_calls_per_probe)} calls per probe` : ''}`,
    `- Wall time: ${r.wall_seconds} s via ${r.via} (seed ${r.seed}, samples ${r.samples ?? 'per set'})`,
    '',
    `| organism | label | family | overall | ${FAMILIES.join(' | ')} | verdict | own-family finding | trigger |`,
    `|---|---|---|---|${FAMILIES.map(() => '---').join('|')}|---|---|---|`,
  ];
  for (const o of r.organisms) {
    const trig = o.trigger
      ? `${o.trigger.recovered ? 'recovered' : o.trigger.works ? 'works, not the planted one' : 'not recovered'} (${o.trigger.found ?? 'none found'}; ${o.trigger.deliveredHits}/${o.trigger.prompts} replay)`
      : '–';
    lines.push(
      `| ${o.name} | ${o.label} | ${o.family ?? '–'} | ${f2(o.score)} | ${FAMILIES.map((f) => f2(o.families[f] ?? 0)).join(' | ')} | ${o.verdict} | ${o.detectedInFamily === null ? '–' : o.detectedInFamily ? 'yes' : 'no'} | ${trig.replace(/\|/g, '\\|')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
