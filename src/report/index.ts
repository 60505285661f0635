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

export const REPORT_FORMATS = ['html', 'md', 'json', 'junit', 'sarif'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** Where writeAllReports puts each format inside RUN (DESIGN "Run directory"). */
export const REPORT_FILES: Record<ReportFormat, string> = {
  html: 'report.html',
  md: 'report.md',
  json: 'report.json',
  junit: 'junit.xml',
  sarif: 'report.sarif',
};

export function renderReport(model: ReportModel, format: ReportFormat): string {
  switch (format) {
    case 'html':
      return renderHtml(model);
    case 'md':
      return renderMarkdown(model);
    case 'json':
      return renderJson(model);
    case 'junit':
      return renderJunit(model);
    case 'sarif':
      return renderSarif(model, TOOL_VERSION);
  }
}

/**
 * Projects the run once and writes every format into RUN. Each file is written to a temporary name and
 * renamed into place, so a reader never sees a half-written report; all are rendered before any is written.
 */
export function writeAllReports(runDir: string, opts: ReportOptions = {}): Record<ReportFormat, string> {
  const model = projectReport(runDir, opts);
  const rendered = REPORT_FORMATS.map((f) => [f, renderReport(model, f)] as const);
  const paths = {} as Record<ReportFormat, string>;
  for (const [format, text] of rendered) {
    const target = join(runDir, REPORT_FILES[format]);
    const tmp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      writeFileSync(tmp, text, { encoding: 'utf8', mode: 0o644 });
      renameSync(tmp, target);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    paths[format] = target;
  }
  return paths;
}
