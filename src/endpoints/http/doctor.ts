import { z } from 'zod';
import { REASONING_TEMPLATE_KWARGS, STEP_BY_STEP } from '../reasoning-request.ts';
import type { ChatMessage, ModelEndpoint } from '../types.ts';
import { type StructuredField, structuredFields } from './capabilities.ts';
import { HttpEndpointError } from './errors.ts';
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
  /** Where reasoning arrived when asked for: a server field, inline `<think>`, or nowhere. */
  reasoning_where: 'reasoning' | 'reasoning_content' | 'inline' | 'none';
  /** Whether the server took `chat_template_kwargs` (null: not tried). */
  template_kwargs_accepted: boolean | null;
  usable: boolean;
  /** One line per capability: what an audit can and cannot use. */
  verdict: string[];
  /** Why the endpoint is unusable (one line), when it is. */
  reason?: string;
}

const HELLO: ChatMessage[] = [{ role: 'user', content: 'How do I boil an egg?' }];
/**
 * Reasoning is asked for explicitly, as the audit asks for it: a step-by-step instruction plus the template
 * switch (`enable_thinking`), because many models reason only when asked and a bare question would show
 * "no reasoning" on a server that has a reasoning channel.
 */
const REASONING: ChatMessage[] = [{ role: 'user', content: `Add 17 and 25. ${STEP_BY_STEP}` }];
// Small fine-tunes can lose their footing on the instruction; the bare question (with the switch) is the
// second try.
const REASONING_BARE: ChatMessage[] = [{ role: 'user', content: 'Add 17 and 25.' }];
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

/** A server that answered (with an HTTP status) was reached: its own message is the reason, not "cannot reach". */
function unreachable(ref: string, err: unknown): string {
  const status = (err as { status?: number })?.status;
  return status === undefined ? `cannot reach ${ref}: ${oneLine(err)}` : `${ref} answered: ${oneLine(err)}`;
}

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
    reasoning_where: 'none',
    template_kwargs_accepted: null,
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
    await probeReasoning(ep, model, r);
  } catch (err) {
    if (!r.reachable) return finish(r, unreachable(ep.ref, err));
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
  if (r.chat) {
    try {
      for (const messages of [REASONING, REASONING_BARE]) {
        const [reply] = await ep.chat({
          messages,
          params: { maxTokens: 256, temperature: 0 },
          chatTemplateKwargs: { ...REASONING_TEMPLATE_KWARGS },
        });
        r.template_kwargs_accepted = true;
        r.reasoning_where = reply?.reasoning !== undefined ? 'inline' : 'none';
        r.reasoning_inline = r.reasoning_where === 'inline';
        if (r.reasoning_inline) break;
      }
    } catch {
      r.template_kwargs_accepted = false;
    }
  }
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

/** Asks for reasoning (with the template switch; without it if the server refuses the field). */
async function probeReasoning(ep: VllmEndpoint, model: string, r: DoctorReport): Promise<void> {
  const ask = (messages: ChatMessage[], kwargs: boolean) =>
    ep.transport.request({
      method: 'POST',
      path: '/v1/chat/completions',
      body: {
        model,
        messages,
        max_tokens: 256,
        temperature: 0,
        ...(kwargs ? { chat_template_kwargs: REASONING_TEMPLATE_KWARGS } : {}),
      },
      schema: rawChat,
    });
  for (const messages of [REASONING, REASONING_BARE]) {
    let reply: z.infer<typeof rawChat>;
    try {
      reply = await ask(messages, r.template_kwargs_accepted !== false);
      r.template_kwargs_accepted = r.template_kwargs_accepted ?? true;
    } catch (err) {
      if (!(err instanceof HttpEndpointError) || err.status !== 400 || r.template_kwargs_accepted !== null)
        throw err;
      r.template_kwargs_accepted = false;
      reply = await ask(messages, false);
    }
    const msg = reply.choices[0]!.message;
    r.reasoning_field = msg.reasoning ? 'reasoning' : msg.reasoning_content ? 'reasoning_content' : null;
    r.reasoning_inline = /<\/?think>/.test(msg.content ?? '');
    r.reasoning_where = r.reasoning_field ?? (r.reasoning_inline ? 'inline' : 'none');
    if (r.reasoning_where !== 'none') return;
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
    reasoningLine(r),
  );
  if (r.reasoning_where === 'none' && r.template_kwargs_accepted !== null)
    v.push(
      'WARNING: the covert-reasoning family needs a reasoning channel; none arrived even when asked, so its probes see answers only',
    );
  return r;
}

function reasoningLine(r: DoctorReport): string {
  const how =
    r.template_kwargs_accepted === false
      ? 'asked with a step-by-step prompt; chat_template_kwargs refused by the server'
      : 'asked with a step-by-step prompt and chat_template_kwargs.enable_thinking';
  switch (r.reasoning_where) {
    case 'reasoning':
    case 'reasoning_content':
      return `reasoning: separate field "${r.reasoning_where}" (${how})`;
    case 'inline':
      return `reasoning: inline <think> (the client splits it; ${how})`;
    case 'none':
      return `reasoning: none observed (${how})`;
  }
}
