import type { ReportFormatDef } from '../../src/report/index.ts';

/** A toy report format, as a plugin author writes one (docs/EXTENDING.md): one file, one table entry. */
export const csvFormat: ReportFormatDef = {
  name: 'csv',
  file: 'findings.csv',
  render: (m) =>
    [
      'id,family,severity',
      ...m.findings.map((f) => `${f.finding.id},${f.finding.family},${f.finding.severity}`),
    ].join('\n'),
};
