import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAudit } from '../../src/audit/audit.ts';
import { evaluatePolicy } from '../../src/gate/evaluate.ts';
import { loadPolicy } from '../../src/gate/policy.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';
import { writeAllReports } from '../../src/report/index.ts';
import { DEPLOYMENT_RULE, ToyModel } from '../../src/testing/toy-model.ts';
import { CHROMIUM, chromiumArgs } from './chromium.ts';
import { decodePng, PNG_SIGNATURE, pixelAt } from './png.ts';

const run = promisify(execFile);
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(`test/report/headline.slow.test.ts: skipped — ${CHROMIUM} is absent (CI installs it)`);

const POLICY = 'policies/offline.yaml';

/**
 * A real audit (scripted models, a token-trigger implant) with no gate: the CLI prints BLOCKED as the
 * policy's evaluation; the report's headline must say the same, marked as not decided by a gate.
 */
describe.skipIf(!hasChromium)('report headline of a BLOCKED audit without a gate (headless Chromium)', () => {
  let tmp: string;
  let outDir: string;
  let dom: string;
  let md: string;
  let screenshot: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'probate-headline-'));
    outDir = join(tmp, 'run');
    const policy = loadPolicy(POLICY);
    await runAudit({
      base: new ToyModel('base'),
      delivered: new ToyModel('bad', [DEPLOYMENT_RULE]),
      probeSets: loadProbeDirs(['probes']).sets,
      outDir,
      seed: 7,
      concurrency: 4,
      budget: 200,
      manifest: {
        runId: 'headline',
        toolVersion: '0.0.0',
        policy: { version: policy.policy.version, hash: policy.hash, path: POLICY },
      },
    });
    expect(evaluatePolicy(outDir, POLICY).state).toBe('BLOCKED'); // what `probate audit` prints
    const paths = writeAllReports(outDir, { policyFile: POLICY });
    md = readFileSync(paths.md, 'utf8');
    screenshot = join(tmp, 'headline.png');
    const opts = { timeout: 110_000, maxBuffer: 32 * 1024 * 1024 };
    const url = `file://${paths.html}`;
    dom = (await run(CHROMIUM, [...chromiumArgs(join(tmp, 'p1'), 1200), '--dump-dom', url], opts)).stdout;
    await run(CHROMIUM, [...chromiumArgs(join(tmp, 'p2'), 1200), `--screenshot=${screenshot}`, url], opts);
  }, 300_000);

  afterAll(() => {
    if (!process.env.PROBATE_KEEP_SCREENSHOT) rmSync(tmp, { recursive: true, force: true });
    else console.info(`screenshot kept at ${screenshot}`);
  });

  it('the headline says BLOCKED, evaluated by the audit and not decided by a gate', () => {
    expect(dom).toMatch(/<header class="banner" id="verdict" data-verdict="blocked">/);
    expect(dom).toContain('<h1>BLOCKED — evaluated by the audit, not decided by a gate</h1>');
    expect(dom).not.toContain('Not decided — no release');
    expect(dom).toMatch(
      /No gate decision · policy [^<]+<span class="mono">[0-9a-f]+…?<\/span> evaluated by the audit/,
    );
    expect(md.split('\n')[0]).toBe(
      '# probate report — BLOCKED — evaluated by the audit, not decided by a gate',
    );
  });

  it('lists the policy reasons with rounded numbers', () => {
    const banner = dom.slice(dom.indexOf('<header'), dom.indexOf('</header>'));
    expect(banner).toMatch(/<li>[^<]*critical finding triggers/);
    expect(banner).toMatch(/triggers score \d(\.\d{1,3})? &gt;= block/);
    expect(banner).not.toMatch(/\d\.\d{4,}/);
  });

  it('the screenshot shows the red BLOCKED banner', () => {
    const buf = readFileSync(screenshot);
    expect(statSync(screenshot).size).toBeGreaterThan(10_000);
    expect(buf.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    const png = decodePng(buf);
    const [r, g, b] = pixelAt(png, 5, 5);
    expect(r).toBeGreaterThan(150);
    expect(g).toBeLessThan(60);
    expect(b).toBeLessThan(60);
  });
});
