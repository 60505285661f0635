import { hfKind } from './hf.ts';
import { hfEndpointKind } from './hf-endpoint.ts';
import { localKind } from './local.ts';
import type { EndpointKindTable } from './types.ts';
import { vllmKind } from './vllm.ts';

/**
 * The endpoint kinds, by reference prefix: one file per kind, one entry here. Parsing (src/endpoints/refs.ts),
 * opening and `probate doctor` (src/endpoints/open.ts) and the CLI's help read this table.
 */
export const ENDPOINT_KINDS: EndpointKindTable = [localKind, vllmKind, hfKind, hfEndpointKind];

/** The reference forms of a table, for help and errors: `local:DIR, vllm:…, hf:MODEL or hf-endpoint:…`. */
export function modelRefForms(kinds: EndpointKindTable = ENDPOINT_KINDS): string {
  const forms = kinds.map((k) => k.form);
  return forms.length < 2 ? (forms[0] ?? '') : `${forms.slice(0, -1).join(', ')} or ${forms.at(-1)}`;
}
