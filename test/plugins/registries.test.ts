import { readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { REPORT_FORMAT_TABLE, renderReport, writeAllReports } from '../../src/report/index.ts';
import { projectReport } from '../../src/report/project.ts';
import { blocked, buildRun, GATE } from '../report/fixtures.ts';
import { csvFormat } from './toy-format.ts';

const run = buildRun({ transitions: [blocked()] });
afterAll(() => rmSync(run, { recursive: true, force: true }));

describe('report formats are a table: one file plus one entry', () => {
  const formats = [...REPORT_FORMAT_TABLE, csvFormat];

  it('writes a toy format next to the shipped ones, from the same projection', () => {
    const paths = writeAllReports(run, GATE, formats);
    expect(Object.keys(paths).sort()).toEqual(formats.map((f) => f.name).sort());
    const csv = readFileSync(paths.csv!, 'utf8');
    const findings = projectReport(run, GATE).findings;
    expect(findings.length).toBeGreaterThan(0);
    expect(csv.split('\n')).toEqual([
      'id,family,severity',
      ...findings.map((f) => `${f.finding.id},${f.finding.family},${f.finding.severity}`),
    ]);
  });

  it('renders by name from the table and refuses a name it does not list', () => {
    const model = projectReport(run, GATE);
    expect(renderReport(model, 'csv', formats)).toContain('id,family,severity');
    expect(() => renderReport(model, 'csv')).toThrow(/unknown report format 'csv'/);
  });
});
