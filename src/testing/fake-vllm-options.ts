/** The fake vLLM server's options, fault scripts and handle (src/testing/fake-vllm.ts). */
import type { ToyRule } from './toy-model.ts';

/** One scripted misbehaviour, consumed by the next generation request (POST /v1/...). */
export type Fault =
  | { kind: 'status'; status: 429 | 500 | 502 | 503 | 504; retryAfter?: string }
  | { kind: 'reset' } // headers and half the body, then the socket is destroyed
  | { kind: 'stall'; ms: number } // no answer for `ms`, then the socket is destroyed
  | { kind: 'sse_error' } // HTTP 200 stream that carries an error event
  | { kind: 'context' } // context-length 400
  | { kind: 'garbage' } // HTTP 200 with a body that is not a completion
  | { kind: 'echo_auth' }; // 400 whose message echoes the Authorization header (a leaky proxy)

/**
 * Random faults at fixed rates, independent of load (a flaky proxy, not an overloaded server), drawn from a
 * seeded generator per generation request. The issue-16 profile: 503 with Retry-After 1 (1/7), a 3 s stall
 * (1/13), a body cut mid-way (1/11), a stream ending in an error event (1/5 of streams).
 */
export interface FaultProfile {
  p503?: number;
  retryAfter?: string;
  pStall?: number;
  stallMs?: number;
  pReset?: number;
  pSseError?: number;
  seed?: number;
}

export const FLAKY_PROFILE: FaultProfile = {
  p503: 1 / 7,
  retryAfter: '1',
  pStall: 1 / 13,
  stallMs: 3000,
  pReset: 1 / 11,
  pSseError: 1 / 5,
};

export interface FakeVllmOptions {
  /** Random faults at fixed rates (after any scripted `faults`). */
  profile?: FaultProfile;
  /** Listen on this port (a replica brought back where it was). Default: any free port. */
  port?: number;
  /** `GET /version`; null answers 404 (a compatible server without it). Default '0.12.0'. */
  version?: string | null;
  /** Default: flat before 0.10.1, else nested. */
  errorShape?: 'flat' | 'nested';
  models?: Array<{ id: string; root?: string; parent?: string | null; max_model_len?: number }>;
  /** Field the "reasoning parser" fills; null leaves `<think>` inline. */
  reasoningField?: 'reasoning' | 'reasoning_content' | null;
  /** Structured-output fields this server honours (others are silently ignored, as vLLM ≥ 0.12 does). */
  structured?: Array<'structured_outputs' | 'response_format' | 'guided_json'>;
  /**
   * A model that reasons only when asked (a hybrid-thinking template with thinking off by default): the
   * `<think>` section appears only with `chat_template_kwargs: {enable_thinking: true}` or a user turn that
   * asks to think step by step ('kwargs': only the template switch counts).
   */
  reasonsOnlyWhenAsked?: boolean | 'kwargs';
  /**
   * Hidden behaviours per served model id (the toy zoo's rules, src/testing/toy-model.ts): the first rule
   * whose `when` matches the prompt's text replaces the default reply, so an audit over HTTP meets an implant.
   */
  rules?: Record<string, ToyRule[]>;
  /** Answer 400 to any `chat_template_kwargs` (a compatible server without that vLLM extra). */
  rejectTemplateKwargs?: boolean;
  /** Reject `prompt_logprobs` with a 400 (servers/proxies that lack it). */
  noPromptLogprobs?: boolean;
  apiKey?: string;
  latencyMs?: number;
  /** More generations in flight than this get a 429. */
  maxConcurrent?: number;
  /**
   * Generations processed at once (a GPU's batch); more wait in a FIFO queue, as in vLLM's waiting queue.
   * With `latencyMs` this gives the server a capacity in requests per second.
   */
  slots?: number;
  faults?: Fault[];
  /**
   * Keep every request in `requests` (default true; tests read them). A benchmark server turns it off: a
   * heap growing by every request of every contender slows the server down as the benchmark goes on.
   */
  recordRequests?: boolean;
}

export interface FakeVllm {
  url: string;
  /** Every request received: path, parsed body, headers. */
  requests: Array<{ method: string; path: string; body: Record<string, unknown>; auth?: string }>;
  faults: Fault[];
  stats: { generations: number; peakInFlight: number; rejected: number };
  close(): Promise<void>;
}
