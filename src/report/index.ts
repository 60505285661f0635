import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOOL_VERSION } from '../util/version.ts';
import { renderHtml } from './html.ts';
import { renderJson } from './json.ts';
import { renderJunit } from './junit.ts';
import { renderMarkdown } from './md.ts';
import type { ReportModel } from './model.ts';
import { projectReport, type ReportOptions } from './project.ts';
import { renderSarif } from './sarif.ts';

export type { ReportModel } from './model.ts';
export { verdictForState } from './model.ts';
export { projectReport, type ReportOptions } from './project.ts';

/** A report format: one renderer of the report model, and the file `audit` and `report --write` put it in. */
export interface ReportFormatDef {
  name: string;
  /** File name inside RUN (DESIGN "Run directory"). */
  file: string;
  render(model: ReportModel): string;
}

/** The report formats: adding one is a renderer file and one entry here (docs/EXTENDING.md). */
export const REPORT_FORMAT_TABLE = [
  { name: 'html', file: 'report.html', render: renderHtml },
  { name: 'md', file: 'report.md', render: renderMarkdown },
  { name: 'json', file: 'report.json', render: renderJson },
  { name: 'junit', file: 'junit.xml', render: renderJunit },
  { name: 'sarif', file: 'report.sarif', render: (m) => renderSarif(m, TOOL_VERSION) },
] as const satisfies readonly ReportFormatDef[];

export type ReportFormat = (typeof REPORT_FORMAT_TABLE)[number]['name'];
export const REPORT_FORMATS = REPORT_FORMAT_TABLE.map((f) => f.name) as ReportFormat[];
export const REPORT_FILES = Object.fromEntries(REPORT_FORMAT_TABLE.map((f) => [f.name, f.file])) as Record<
  ReportFormat,
  string
>;

export function renderReport(
  model: ReportModel,
  format: string,
  formats: readonly ReportFormatDef[] = REPORT_FORMAT_TABLE,
): string {
  const def = formats.find((f) => f.name === format);
  if (!def) throw new Error(`unknown report format '${format}'`);
  return def.render(model);
}

/**
 * Projects the run once and writes every format into RUN. Each file is written to a temporary name and
 * renamed into place, so a reader never sees a half-written report; all are rendered before any is written.
 */
export function writeAllReports<F extends readonly ReportFormatDef[] = typeof REPORT_FORMAT_TABLE>(
  runDir: string,
  opts: ReportOptions = {},
  formats: F = REPORT_FORMAT_TABLE as unknown as F,
): Record<F[number]['name'], string> {
  const model = projectReport(runDir, opts);
  const rendered = formats.map((f) => [f, f.render(model)] as const);
  const paths = {} as Record<F[number]['name'], string>;
  for (const [format, text] of rendered) {
    const target = join(runDir, format.file);
    const tmp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      writeFileSync(tmp, text, { encoding: 'utf8', mode: 0o644 });
      renameSync(tmp, target);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    paths[format.name as F[number]['name']] = target;
  }
  return paths;
}
