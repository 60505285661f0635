import { z } from 'zod';
import type { ChatMessage, ModelEndpoint } from '../types.ts';
import { type StructuredField, structuredFields } from './capabilities.ts';
import type { VllmEndpoint } from './vllm.ts';

/** What `probate doctor` found; the JSON form of `probate doctor --json`. */
export interface DoctorReport {
  ref: string;
  reachable: boolean;
  version: string | null;
  models: Array<{ id: string; root: string | null; parent: string | null; max_model_len: number | null }>;
  model_served: boolean;
  max_model_len: number | null;
  chat: boolean;
  latency_ms: number | null;
  logprobs: boolean;
  prompt_logprobs: boolean;
  structured_output: StructuredField | null;
  reasoning_field: 'reasoning' | 'reasoning_content' | null;
  reasoning_inline: boolean;
  usable: boolean;
  /** One line per capability: what an audit can and cannot use. */
  verdict: string[];
  /** Why the endpoint is unusable (one line), when it is. */
  reason?: string;
}

const HELLO: ChatMessage[] = [{ role: 'user', content: 'How do I boil an egg?' }];
// A short arithmetic question: reasoning models (and the organisms) open a reasoning section for it.
const REASONING: ChatMessage[] = [{ role: 'user', content: 'Add 17 and 25.' }];
const JSON_SCHEMA = {
  type: 'object',
  properties: { ok: { type: 'boolean' } },
  required: ['ok'],
  additionalProperties: false,
};
const rawChat = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: z.string().nullish(),
          reasoning: z.string().nullish(),
          reasoning_content: z.string().nullish(),
        }),
      }),
    )
    .min(1),
});

const oneLine = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0]!;

function emptyReport(ref: string): DoctorReport {
  return {
    ref,
    reachable: false,
    version: null,
    models: [],
    model_served: false,
    max_model_len: null,
    chat: false,
    latency_ms: null,
    logprobs: false,
    prompt_logprobs: false,
    structured_output: null,
    reasoning_field: null,
    reasoning_inline: false,
    usable: false,
    verdict: [],
  };
}

/** Checks a vLLM-compatible server by trying each capability, never by trusting its version alone. */
export async function diagnoseVllm(ep: VllmEndpoint, model: string): Promise<DoctorReport> {
  const r = emptyReport(ep.ref);
  try {
    const caps = await ep.capabilities();
    r.version = caps.version ?? null;
    const listed = await ep.models();
    r.reachable = true;
    r.models = listed.data.map((m) => ({
      id: m.id,
      root: m.root ?? null,
      parent: m.parent ?? null,
      max_model_len: m.max_model_len ?? null,
    }));
    const entry = r.models.find((m) => m.id === model);
    r.model_served = entry !== undefined;
    r.max_model_len = entry?.max_model_len ?? null;
    if (!entry)
      return finish(r, `model "${model}" is not served (served: ${r.models.map((m) => m.id).join(', ')})`);
    const order: StructuredField[] = [
      caps.structuredField,
      'structured_outputs',
      'response_format',
      'guided',
    ];
    await probeCommon(ep, r);
    if (!r.chat) return finish(r, r.reason ?? 'chat failed');
    for (const field of [...new Set(order)]) {
      if (await structuredWorks(ep, model, field)) {
        r.structured_output = field;
        break;
      }
    }
    const reply = await ep.transport.request({
      method: 'POST',
      path: '/v1/chat/completions',
      body: { model, messages: REASONING, max_tokens: 256, temperature: 0 },
      schema: rawChat,
    });
    const msg = reply.choices[0]!.message;
    r.reasoning_field = msg.reasoning ? 'reasoning' : msg.reasoning_content ? 'reasoning_content' : null;
    r.reasoning_inline = (msg.content ?? '').includes('</think>');
  } catch (err) {
    if (!r.reachable) return finish(r, `cannot reach ${ep.ref}: ${oneLine(err)}`);
    r.verdict.push(`probe failed: ${oneLine(err)}`);
  }
  return finish(r);
}

/** Any endpoint (local, hf:): identity, chat, logprobs, scoring. */
export async function diagnoseGeneric(ep: ModelEndpoint): Promise<DoctorReport> {
  const r = emptyReport(ep.ref);
  try {
    const id = await ep.identity();
    r.reachable = true;
    r.model_served = true;
    r.version = id.serverVersion ?? null;
    r.max_model_len = id.maxModelLen ?? null;
    r.models = [
      { id: id.modelId, root: id.root ?? null, parent: id.parent ?? null, max_model_len: r.max_model_len },
    ];
  } catch (err) {
    return finish(r, `cannot open ${ep.ref}: ${oneLine(err)}`);
  }
  await probeCommon(ep, r);
  return finish(r, r.chat ? undefined : r.reason);
}

async function probeCommon(ep: ModelEndpoint, r: DoctorReport): Promise<void> {
  const t0 = performance.now();
  try {
    const [reply] = await ep.chat({ messages: HELLO, params: { maxTokens: 16, temperature: 0 } });
    r.chat = reply !== undefined;
    r.latency_ms = Math.round(performance.now() - t0);
  } catch (err) {
    r.reason = `chat failed: ${oneLine(err)}`;
    return;
  }
  try {
    const [reply] = await ep.chat({ messages: HELLO, params: { maxTokens: 4, temperature: 0, logprobs: 1 } });
    r.logprobs = (reply?.logprobs?.length ?? 0) > 0;
  } catch {
    r.logprobs = false;
  }
  try {
    const [s] = await ep.score([{ context: HELLO, continuation: 'Boil it.' }]);
    r.prompt_logprobs = (s?.tokens.length ?? 0) > 0 && s!.tokens.every((t) => Number.isFinite(t.logprob));
  } catch {
    r.prompt_logprobs = false;
  }
}

async function structuredWorks(ep: VllmEndpoint, model: string, field: StructuredField): Promise<boolean> {
  try {
    const reply = await ep.transport.request({
      method: 'POST',
      path: '/v1/chat/completions',
      body: {
        model,
        messages: [{ role: 'user', content: 'Say hello.' }],
        max_tokens: 32,
        temperature: 0,
        ...structuredFields(field, 'doctor', JSON_SCHEMA),
      },
      schema: rawChat,
    });
    const value = JSON.parse(reply.choices[0]?.message.content ?? '');
    return typeof value === 'object' && value !== null && typeof value.ok === 'boolean';
  } catch {
    return false; // a 400 for an unknown field, or unconstrained text: the field does not work here
  }
}

function finish(r: DoctorReport, reason?: string): DoctorReport {
  r.usable = r.reachable && r.model_served && r.chat && reason === undefined;
  if (reason) r.reason = reason;
  const v = r.verdict;
  v.unshift(
    r.usable
      ? `usable for an audit (chat ok${r.latency_ms !== null ? `, ${r.latency_ms} ms` : ''})`
      : `NOT usable: ${r.reason}`,
  );
  if (!r.usable) return r;
  v.push(
    r.prompt_logprobs
      ? 'teacher-forced scoring: yes (cross-model logprob signals available)'
      : 'teacher-forced scoring: no (the audit falls back to text-only signals)',
    r.logprobs ? 'reply logprobs: yes' : 'reply logprobs: no',
    r.structured_output
      ? `structured output: via ${r.structured_output}`
      : 'structured output: none works (cannot serve as a constrained judge)',
    r.reasoning_field
      ? `reasoning: separate field "${r.reasoning_field}"`
      : r.reasoning_inline
        ? 'reasoning: inline <think> (the client splits it)'
        : 'reasoning: none observed',
  );
  return r;
}
