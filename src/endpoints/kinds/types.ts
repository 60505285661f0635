import { z } from 'zod';
import { type DoctorReport, diagnoseGeneric } from '../http/doctor.ts';
import type { OpenOptions } from '../open.ts';
import type { ModelEndpoint } from '../types.ts';

/** A parsed model reference: its kind (the prefix) and the redacted reference; each kind adds its fields. */
export interface ModelRef {
  kind: string;
  /** The reference as it may appear in identities, ledgers and reports: credentials and query removed. */
  ref: string;
}

/** What a kind's opener gets: the open options plus the API key already read from the named variable. */
export interface OpenContext extends OpenOptions {
  apiKey?: string;
  env: NodeJS.ProcessEnv;
}

/**
 * An endpoint kind: everything probate knows about one reference prefix (`vllm:`), in one entry of the
 * table in ./index.ts — how the reference is written, parsed and redacted, how it is opened, and how
 * `probate doctor` pre-flights it. Methods (not arrow properties) so a table can hold kinds of different
 * reference types.
 */
export interface EndpointKindDef<R extends ModelRef = ModelRef> {
  /** The reference prefix before the first ':'. */
  prefix: string;
  /** How a reference of this kind is written, for help texts and errors (`vllm:URL[,URL...]#MODEL`). */
  form: string;
  /** The fields of a reference from what follows `prefix:`, before validation. */
  split(rest: string): Record<string, unknown>;
  /** Validates the split fields; an issue's path names the field in the one-line error. */
  fields: z.ZodType<Omit<R, 'kind' | 'ref'>>;
  /** The reference as it may appear in identities, ledgers and reports. */
  redact(fields: Omit<R, 'kind' | 'ref'>): string;
  open(ref: R, ctx: OpenContext): Promise<ModelEndpoint>;
  /** `probate doctor`: tries what an audit needs from the endpoint (never throws for an unusable one). */
  doctor(ref: R, ctx: OpenContext): Promise<DoctorReport>;
}

/** A table of endpoint kinds (src/endpoints/kinds/index.ts ships one; tests pass their own). */
export type EndpointKindTable = readonly EndpointKindDef[];

export const httpUrl = z
  .string()
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'expected an http(s) URL')
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.username === '' && u.password === '';
    } catch {
      return true; // already reported as not a URL
    }
  }, 'credentials in a URL are not accepted; name an environment variable with --api-key-env')
  .refine((s) => {
    try {
      return new URL(s).search === '';
    } catch {
      return true;
    }
  }, 'a query string (?token=…) is never sent; name the environment variable holding a key with --api-key-env')
  .transform((s) => s.replace(/\/+$/, ''));

export const modelName = (after: string) =>
  z
    .string()
    .min(1, `expected a model name after ${after}`)
    .regex(/^[^\s#,]+$/, 'model name must not contain spaces, # or ,');

/** `URL#MODEL` → [URL, MODEL] (the model is after the last '#'; none: empty). */
export function splitModel(s: string): [string, string] {
  const hash = s.lastIndexOf('#');
  return hash < 0 ? [s, ''] : [s.slice(0, hash), s.slice(hash + 1)];
}

/** Doctor for kinds without a server API to inspect: open as an audit would, try it, close it. */
export async function doctorByOpening(open: () => Promise<ModelEndpoint>): Promise<DoctorReport> {
  const ep = await open();
  try {
    return await diagnoseGeneric(ep);
  } finally {
    await ep.close();
  }
}
