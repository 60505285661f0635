import { UserError } from '../util/errors.ts';
import { ENDPOINT_KINDS, modelRefForms } from './kinds/index.ts';
import type { EndpointKindTable, ModelRef } from './kinds/types.ts';
import { redactText } from './redact.ts';

/**
 * Model references as users write them: `PREFIX:REST`, where the prefix names an endpoint kind of the
 * table in src/endpoints/kinds/ (`local:DIR`, `vllm:URL[,URL...]#MODEL`, `hf:MODEL`, `hf-endpoint:URL#MODEL`).
 * A URL may carry credentials (`http://user:key@host`); they never leave this module unredacted.
 */
export type { ModelRef } from './kinds/types.ts';

/** Parses a model reference; a bad one is a one-line UserError naming `where` (a flag or config field). */
export function parseModelRef(
  input: string,
  where = 'model reference',
  kinds: EndpointKindTable = ENDPOINT_KINDS,
): ModelRef {
  const text = input.trim();
  const colon = text.indexOf(':');
  const prefix = colon > 0 ? text.slice(0, colon) : '';
  const rest = colon > 0 ? text.slice(colon + 1) : '';
  const forms = modelRefForms(kinds);
  const kind = kinds.find((k) => k.prefix === prefix);
  if (!kind)
    throw new UserError(`${where}: "${redactText(text)}" is not a model reference (expected ${forms})`);
  const parsed = kind.fields.safeParse(kind.split(rest));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.filter((p) => typeof p === 'string').join('.') || prefix;
    throw new UserError(
      `${where}: "${redactText(text)}": ${field}: ${issue?.message ?? 'invalid'} (expected ${forms})`,
    );
  }
  return { ...parsed.data, kind: kind.prefix, ref: kind.redact(parsed.data) };
}

/** The kind a parsed reference belongs to (a reference parsed with another table is a caller's bug). */
export function kindOf(ref: ModelRef, kinds: EndpointKindTable = ENDPOINT_KINDS) {
  const kind = kinds.find((k) => k.prefix === ref.kind);
  if (!kind) throw new Error(`no endpoint kind '${ref.kind}' in this table`);
  return kind;
}
