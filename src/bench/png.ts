import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Renders an SVG to PNG with Debian's headless Chromium: a screenshot of an HTML page embedding the SVG,
 * sized to the SVG. Returns null with the reason when Chromium is absent or fails (PNG is optional; the
 * SVG is the primary artefact).
 */
export async function svgToPng(svg: string, outFile: string, chromium = CHROMIUM): Promise<string | null> {
  if (!existsSync(chromium)) return `PNG not written: ${chromium} is absent (apt-get install chromium)`;
  const width = Number(/width="([\d.]+)"/.exec(svg)?.[1] ?? 800);
  const height = Number(/height="([\d.]+)"/.exec(svg)?.[1] ?? 600);
  const dir = mkdtempSync(join(tmpdir(), 'probate-png-'));
  try {
    const page = join(dir, 'chart.html');
    writeFileSync(
      page,
      `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;background:#fff}</style></head><body>${svg}</body></html>`,
    );
    await run(
      chromium,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--hide-scrollbars',
        `--user-data-dir=${join(dir, 'profile')}`,
        `--window-size=${Math.ceil(width)},${Math.ceil(height)}`,
        `--screenshot=${resolve(outFile)}`,
        `file://${page}`,
      ],
      { timeout: 120_000 },
    );
    return existsSync(outFile) ? null : 'PNG not written: chromium produced no screenshot';
  } catch (err) {
    return `PNG not written: chromium failed (${(err as Error).message.split('\n')[0]})`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
