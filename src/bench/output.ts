import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { svgToPng } from './png.ts';
import type { ZooBenchResult } from './zoo.ts';
import { zooFamilySvg, zooMarkdown, zooRocSvg } from './zoo-report.ts';

/** Writes through a temporary file and a rename: a reader never sees half a result. */
export function writeAtomic(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

export function writeJson(file: string, value: unknown): void {
  writeAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** The zoo benchmark's artefacts in `dir`: result JSON, Markdown table, ROC and per-family plots (SVG + PNG). */
export async function writeZooArtefacts(
  dir: string,
  r: ZooBenchResult,
  opts: { png?: boolean } = {},
): Promise<{ files: string[]; notes: string[] }> {
  const files: string[] = [];
  const notes: string[] = [];
  const put = (name: string, text: string) => {
    writeAtomic(`${dir}/${name}`, text);
    files.push(`${dir}/${name}`);
  };
  put('zoo-result.json', `${JSON.stringify(r, null, 2)}\n`);
  put('zoo.md', zooMarkdown(r));
  const charts = { 'zoo-roc': zooRocSvg(r), 'zoo-families': zooFamilySvg(r) };
  for (const [name, svg] of Object.entries(charts)) {
    put(`${name}.svg`, svg);
    if (opts.png === false) continue;
    const note = await svgToPng(svg, `${dir}/${name}.png`);
    if (note) notes.push(note);
    else files.push(`${dir}/${name}.png`);
  }
  return { files, notes };
}
