import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import type { z } from 'zod';
import { describeZodIssue, UserError } from './errors.ts';

/** Reads a JSON or YAML file and validates it; every failure is a one-line UserError naming the file. */
export function readValidated<T extends z.ZodType>(file: string, schema: T): z.infer<T> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let data: unknown;
  try {
    data = /\.ya?ml$/i.test(file) ? YAML.parse(text) : JSON.parse(text);
  } catch (err) {
    throw new UserError(
      `${file}: not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new UserError(describeZodIssue(file, parsed.error.issues));
  return parsed.data;
}
