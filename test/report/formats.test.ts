import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { REPORT_FORMATS, renderReport, writeAllReports } from '../../src/report/index.ts';
import type { ReportModel } from '../../src/report/model.ts';
import { projectReport } from '../../src/report/project.ts';
import { blocked, buildRun, GATE, gatePubFile } from './fixtures.ts';

let blockedDir: string;
let undecidedDir: string;
let blockedModel: ReportModel;
let undecidedModel: ReportModel;

beforeAll(() => {
  blockedDir = buildRun({ transitions: [blocked()] });
  undecidedDir = buildRun();
  blockedModel = projectReport(blockedDir, GATE);
  undecidedModel = projectReport(undecidedDir, GATE);
});
afterAll(() => {
  rmSync(blockedDir, { recursive: true, force: true });
  rmSync(undecidedDir, { recursive: true, force: true });
});

describe('every format carries the gate verdict', () => {
  it.each(REPORT_FORMATS)('%s says blocked for a BLOCKED run and never "allowed"', (format) => {
    const text = renderReport(blockedModel, format);
    expect(text).toContain('Release blocked');
    expect(text).not.toContain('Release allowed');
  });

  it.each(REPORT_FORMATS)('%s says not decided when no transition exists', (format) => {
    const text = renderReport(undecidedModel, format);
    expect(text).toContain('Not decided by a gate — no release');
    expect(text).not.toMatch(/Release (allowed|blocked)/);
  });
});

describe('json', () => {
  it('exposes state, verdict, findings, families, overall and the evidence root', () => {
    const j = JSON.parse(renderReport(blockedModel, 'json'));
    expect(j).toMatchObject({ state: 'BLOCKED', verdict: 'blocked', overall: { score: 0.74 } });
    expect(j.evidenceRoot).toMatch(/^[0-9a-f]{64}$/);
    expect(
      j.findings.map((f: { id: string; family: string; severity: string }) => [f.id, f.family, f.severity]),
    ).toEqual([
      ['triggers:conditional-divergence:a1b2c3', 'triggers', 'critical'],
      ['injection:canary-obeyed:d4e5f6', 'injection', 'medium'],
      ['injection:verbosity:0a0b0c', 'injection', 'low'],
    ]);
    expect(j.findings[0].record.seq).toBeGreaterThan(0);
    expect(j.families).toHaveLength(2);
    expect(j.decision.record.seq).toBe(blockedModel.gate.transition!.ref.seq);
    const u = JSON.parse(renderReport(undecidedModel, 'json'));
    expect([u.state, u.verdict, u.decision]).toEqual(['UNDECIDED', 'undecided', null]);
  });
});

describe('junit', () => {
  const xml = () => renderReport(blockedModel, 'junit');
  it('has a failing gate suite and one suite per family', () => {
    const suites = [
      ...xml().matchAll(/<testsuite name="([^"]+)" tests="(\d+)" failures="(\d+)" errors="(\d+)"/g),
    ].map((m) => m.slice(1));
    expect(suites).toEqual([
      ['probate.gate', '1', '1', '0'],
      ['probate.triggers', '1', '1', '0'],
      // canary-obeyed (medium) fails, verbosity (low) is skipped, the timed-out exchange is an error.
      ['probate.injection', '3', '1', '1'],
    ]);
    expect(xml()).toMatch(
      /<testsuites name="probate [^"]+: Release blocked" tests="5" failures="3" errors="1">/,
    );
    expect(xml()).toContain('<failure message="Release blocked" type="blocked">');
    expect(xml()).toContain('<skipped message="low severity: reported, not failing"/>');
    expect(xml()).toMatch(
      /<error message="exchange failed \(delivered\)" type="exchange-failed">delivered: timeout/,
    );
  });
});

describe('sarif', () => {
  it('is SARIF 2.1.0 with one result per finding, rule = kind, level from severity', () => {
    const s = JSON.parse(renderReport(blockedModel, 'sarif'));
    expect(s.version).toBe('2.1.0');
    const r = s.runs[0];
    expect(r.results.map((x: { ruleId: string; level: string }) => [x.ruleId, x.level])).toEqual([
      ['conditional-divergence', 'error'],
      ['canary-obeyed', 'warning'],
      ['verbosity-shift', 'note'],
    ]);
    for (const res of r.results) expect(r.tool.driver.rules[res.ruleIndex].id).toBe(res.ruleId);
    expect(r.invocations[0].toolExecutionNotifications[0]).toMatchObject({ level: 'error' });
    expect(r.properties).toMatchObject({ gateState: 'BLOCKED', verdict: 'blocked' });
  });
});

describe('markdown', () => {
  it('leads with the verdict and cites records', () => {
    const md = renderReport(blockedModel, 'md');
    expect(md.split('\n')[0]).toBe('# probate report — Release blocked');
    expect(md).toMatch(/### \[CRITICAL\] Delivered model writes insecure code/);
    expect(md).toMatch(/record \[#\d+·[0-9a-f]{8}\]/);
  });
});

describe('writeAllReports and the CLI', () => {
  it('writes all five files and leaves no temporary file behind', () => {
    const paths = writeAllReports(blockedDir, GATE);
    expect(Object.keys(paths).sort()).toEqual([...REPORT_FORMATS].sort());
    const files = readdirSync(blockedDir);
    for (const f of ['report.html', 'report.md', 'report.json', 'junit.xml', 'report.sarif'])
      expect(files).toContain(f);
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(JSON.parse(readFileSync(join(blockedDir, 'report.json'), 'utf8')).verdict).toBe('blocked');
  });

  it('`probate report RUN --format json` prints the report; a bad RUN is a one-line usage error', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const so = vi.spyOn(process.stdout, 'write').mockImplementation((c) => {
      out.push(String(c));
      return true;
    });
    const se = vi.spyOn(process.stderr, 'write').mockImplementation((c) => {
      err.push(String(c));
      return true;
    });
    try {
      expect(await main(['report', blockedDir, '--format', 'json', '--gate-pub', gatePubFile()])).toBe(0);
      expect(await main(['report', join(blockedDir, 'nope')])).toBe(2);
    } finally {
      so.mockRestore();
      se.mockRestore();
    }
    expect(JSON.parse(out.join('')).state).toBe('BLOCKED');
    expect(err.join('')).toMatch(/^probate: .*nope: not a directory[^\n]*\n$/);
  });
});
