import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import type { z } from 'zod';
import { describeZodIssue, UserError } from './errors.ts';
import { checkFileSize, FILE_LIMITS } from './file-size.ts';

/** Reads a JSON or YAML file and validates it; every failure is a one-line UserError naming the file. */
export function readValidated<T extends z.ZodType>(
  file: string,
  schema: T,
  maxBytes: number = FILE_LIMITS.document,
): z.infer<T> {
  checkFileSize(file, maxBytes, 'this file');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let data: unknown;
  const yaml = /\.ya?ml$/i.test(file);
  try {
    data = yaml ? YAML.parse(text) : JSON.parse(text);
  } catch (err) {
    throw new UserError(`${file}: not valid ${yaml ? 'YAML' : 'JSON'}${parseErrorPosition(err, text)}`);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new UserError(describeZodIssue(file, parsed.error.issues));
  return parsed.data;
}

/**
 * Where a JSON/YAML parse failed, as " (line L, column C)". Never the parser's message: V8 and yaml quote
 * the offending text, and errors must not echo file contents (a secret file named by mistake stays secret).
 */
export function parseErrorPosition(err: unknown, text: string): string {
  const linePos = (err as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
  if (linePos) return ` (line ${linePos.line}, column ${linePos.col})`;
  const m = /position (\d+)/.exec((err as Error)?.message ?? '');
  if (!m) return '';
  const before = text.slice(0, Number(m[1]));
  const line = before.split('\n').length;
  return ` (line ${line}, column ${before.length - before.lastIndexOf('\n')})`;
}
