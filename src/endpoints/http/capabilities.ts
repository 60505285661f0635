import type { ErrorShape } from './errors.ts';

/** Which request field carries a JSON schema on this server. */
export type StructuredField = 'structured_outputs' | 'response_format' | 'guided';

export interface ServerCapabilities {
  /** `GET /version`, when the server answers it. */
  version?: string;
  errorShape: ErrorShape;
  structuredField: StructuredField;
}

/** "0.11.1rc2.dev12+gabc" → [0, 11, 1]; undefined when not a version. */
export function parseVersion(version: string | undefined): [number, number, number] | undefined {
  const m = version ? /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version.trim()) : null;
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

function atLeast(v: [number, number, number], min: [number, number, number]): boolean {
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i]! > min[i]!;
  return true;
}

/**
 * What the version implies (docs/vllm-protocol): nested errors from 0.10.1; `guided_*` removed in 0.12.0
 * and silently ignored after, so ≥ 0.12 uses `structured_outputs`; 0.6–0.11 take the portable
 * `response_format: json_schema`; only older servers get `guided_json`. An unknown version (a proxy, a
 * compatible server) gets the portable field; `probate doctor` checks which one actually constrains.
 */
export function capabilitiesFor(version: string | undefined, override?: StructuredField): ServerCapabilities {
  const v = parseVersion(version);
  let structuredField: StructuredField = 'response_format';
  if (v && atLeast(v, [0, 12, 0])) structuredField = 'structured_outputs';
  else if (v && !atLeast(v, [0, 6, 0])) structuredField = 'guided';
  return {
    version,
    errorShape: v && !atLeast(v, [0, 10, 1]) ? 'flat' : 'nested',
    structuredField: override ?? structuredField,
  };
}

/** The request fields that ask for JSON matching `schema`, in the form this server reads. */
export function structuredFields(
  field: StructuredField,
  name: string,
  schema: Record<string, unknown>,
): Record<string, unknown> {
  switch (field) {
    case 'structured_outputs':
      return { structured_outputs: { json: schema } };
    case 'response_format':
      return { response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } } };
    case 'guided':
      return { guided_json: schema };
  }
}
