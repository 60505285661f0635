import { readFileSync } from 'node:fs';

/** probate's version, read once from package.json: the CLI, manifests, reports and `serve` all use it. */
export const TOOL_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
