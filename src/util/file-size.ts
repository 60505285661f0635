import { statSync } from 'node:fs';
import { UserError } from './errors.ts';

/**
 * Size limits of the files users hand over, checked before a byte is parsed: a 36 MB probe YAML would parse
 * for half a minute, and nothing legitimate comes close to these.
 */
export const FILE_LIMITS = {
  probeSet: 8 * 1024 * 1024,
  policy: 1024 * 1024,
  /** Labels, rubrics, manifests and other validated JSON/YAML. */
  document: 16 * 1024 * 1024,
} as const;

/** Throws a one-line UserError when `file` is larger than `maxBytes` (a missing file is left to the reader). */
export function checkFileSize(file: string, maxBytes: number, what: string): void {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return;
  }
  if (size > maxBytes)
    throw new UserError(`${file}: ${size} bytes is over the ${maxBytes}-byte limit for ${what}`);
}
