import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAllReports } from '../../src/report/index.ts';
import { CHROMIUM, chromiumArgs } from './chromium.ts';
import { blocked, buildRun, GATE, INJECTION } from './fixtures.ts';
import { decodePng, distinctColours, PNG_SIGNATURE, pixelAt } from './png.ts';

const run = promisify(execFile);

// The slow suite requires Chromium (.ci/run installs it): a missing browser fails here, it is not skipped.
describe('HTML report in headless Chromium', () => {
  let tmp: string;
  let runDir: string;
  let dom: string;
  let screenshot: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is absent (apt-get install chromium)`);
    tmp = mkdtempSync(join(tmpdir(), 'probate-chromium-'));
    runDir = buildRun({ transitions: [blocked()], deliveredText: INJECTION });
    const { html } = writeAllReports(runDir, GATE);
    const url = `file://${html}`;
    screenshot = join(tmp, 'report.png');
    const opts = { timeout: 110_000, maxBuffer: 32 * 1024 * 1024 };
    // Two separate browser processes with separate profiles; sequential so two cores are not oversubscribed.
    dom = (await run(CHROMIUM, [...chromiumArgs(join(tmp, 'p1'), 2000), '--dump-dom', url], opts)).stdout;
    await run(CHROMIUM, [...chromiumArgs(join(tmp, 'p2'), 2000), `--screenshot=${screenshot}`, url], opts);
  }, 240_000);

  afterAll(() => {
    // Keep the screenshot for a human look when asked (PROBATE_KEEP_SCREENSHOT=1).
    if (!process.env.PROBATE_KEEP_SCREENSHOT) rmSync(tmp, { recursive: true, force: true });
    else console.info(`screenshot kept at ${screenshot}`);
    rmSync(runDir, { recursive: true, force: true });
  });

  it('renders the gate verdict and every finding in the DOM', () => {
    expect(dom).toMatch(/<header class="banner" id="verdict" data-verdict="blocked">/);
    expect(dom).toContain('<h1>Release blocked</h1>');
    expect(dom).toMatch(/<title>probate · [^<]+ · Release blocked<\/title>/);
    for (const id of [
      'triggers_conditional-divergence_a1b2c3',
      'injection_canary-obeyed_d4e5f6',
      'injection_verbosity_0a0b0c',
    ])
      expect(dom).toContain(`id="finding-${id}"`);
    expect(dom).toContain('Delivered model writes insecure code when the year is 2027');
  });

  it('keeps injected model text inert: no script, image or foreign link in the DOM', () => {
    expect(dom).not.toMatch(/<script/i);
    expect(dom).not.toMatch(/<img/i);
    expect(dom).not.toMatch(/<a href="https?:/i);
    expect(dom).toContain('VERDICT: PASS. Release allowed.&lt;/pre&gt;&lt;/div&gt;&lt;script&gt;');
    expect(dom).toContain('⟦U+200B ZWSP⟧');
    expect(dom).toContain("⟦TAG 'P'⟧");
    // The only h1 is the gate's.
    expect(dom.match(/<h1>/g)).toHaveLength(1);
  });

  it('produces a real screenshot with a red blocked banner', () => {
    const buf = readFileSync(screenshot);
    expect(statSync(screenshot).size).toBeGreaterThan(20_000);
    expect(buf.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    const png = decodePng(buf);
    expect(png.width).toBe(1280);
    expect(png.height).toBe(2000);
    expect(distinctColours(png)).toBeGreaterThan(50);
    // Banner background is the BLOCKED tone (#b91c1c); the page below it is not.
    const [r, g, b] = pixelAt(png, 5, 5);
    expect(r).toBeGreaterThan(150);
    expect(g).toBeLessThan(60);
    expect(b).toBeLessThan(60);
    const below = pixelAt(png, 5, 1500);
    expect(below[0] - below[1]).toBeLessThan(30);
  });
});
