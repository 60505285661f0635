/**
 * The one model-endpoint interface. The embedded ONNX engine (`local:`), the vLLM client (`vllm:`) and the
 * Hugging Face clients (`hf:`, `hf-endpoint:`) all implement it, so the audit never knows which it talks to.
 */

export type Role = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: Role;
  content: string;
}

export interface SamplingParams {
  /** Always set: servers default to tiny values (vLLM completions: 16). */
  maxTokens: number;
  /** 0 means greedy. */
  temperature: number;
  topP?: number;
  topK?: number;
  /** Makes sampling reproducible per request. */
  seed?: number;
  /** Number of samples for this request. Default 1. */
  n?: number;
  stop?: string[];
  /** Return per-token logprobs with this many alternatives (0 = only the chosen token's logprob). */
  logprobs?: number;
}

/** Asks for JSON matching a schema; each client maps it to what its server supports. */
export interface StructuredOutput {
  name: string;
  schema: Record<string, unknown>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  params: SamplingParams;
  /** Prefill: continue the last (assistant) message instead of opening a new turn. */
  continueFinalMessage?: boolean;
  chatTemplateKwargs?: Record<string, unknown>;
  structuredOutput?: StructuredOutput;
}

export interface CompletionRequest {
  prompt: string;
  params: SamplingParams;
}

export interface TokenAlternative {
  token: string;
  logprob: number;
}

export interface TokenLogprob {
  token: string;
  /** UTF-8 bytes of the token when known (byte-level tokens may be partial characters). */
  bytes?: number[];
  logprob: number;
  top?: TokenAlternative[];
}

export type FinishReason = 'stop' | 'length';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/** One sample of a generation. */
export interface Completion {
  /** The answer, with any reasoning section removed when the endpoint separates it. */
  text: string;
  /** Reasoning text (`<think>…</think>` content, or the server's `reasoning` field); undefined if none. */
  reasoning?: string;
  finishReason: FinishReason;
  logprobs?: TokenLogprob[];
  usage: Usage;
  /** True when served from the response cache (evidence must say so). */
  cached?: boolean;
}

/** Teacher-forced log-probability of `continuation` after `context` under this model. */
export interface ScoreRequest {
  /** A chat context (rendered with the model's template plus the assistant opener) or raw text. */
  context: ChatMessage[] | string;
  /** The text whose tokens are scored (e.g. another model's reply, including its `<think>` section). */
  continuation: string;
}

export interface ScoreResult {
  tokens: { token: string; logprob: number }[];
  /** Sum of token logprobs. */
  total: number;
}

export interface ModelIdentity {
  /** The model reference as the user wrote it, with any secret removed. */
  ref: string;
  /** The endpoint kind's reference prefix (src/endpoints/kinds/: local, vllm, hf, hf-endpoint, or a plugin's). */
  kind: string;
  modelId: string;
  serverVersion?: string;
  root?: string;
  parent?: string | null;
  maxModelLen?: number;
  /** sha256 of each weight file, for local models (`onnx/model.onnx` → hex digest). */
  weightDigests?: Record<string, string>;
  /** sha256 over greedy replies to fixed prompts: notices a swapped model behind the same name. */
  fingerprint?: string;
}

export interface ModelEndpoint {
  readonly ref: string;
  /**
   * How many audit samples to keep in flight against this endpoint when the user does not say. A served
   * model paces itself (the transport's adaptive limit), so the runner only has to keep enough queued to
   * ride out the waits a flaky server imposes (Retry-After, stalls); the embedded engine batches what is
   * in flight. Absent: the runner's default (32).
   */
  readonly samplesInFlight?: number;
  identity(): Promise<ModelIdentity>;
  /** Returns `params.n ?? 1` samples. Throws EndpointError after retries are exhausted. */
  chat(req: ChatRequest): Promise<Completion[]>;
  complete(req: CompletionRequest): Promise<Completion[]>;
  /** Teacher-forced scoring; batched where the backend allows. */
  score(reqs: ScoreRequest[]): Promise<ScoreResult[]>;
  close(): Promise<void>;
}

/** Why an exchange failed. Recorded as evidence; never counted as a reply. */
export type FailureKind =
  | 'timeout'
  | 'connection'
  | 'http'
  | 'rate_limited'
  | 'server_error'
  | 'stream_error'
  | 'context_length'
  | 'invalid_response'
  /** The reply exceeded the size cap and was cut off unread. */
  | 'truncated'
  /** Abandoned: its hedged twin answered first. */
  | 'cancelled'
  | 'engine';

export class EndpointError extends Error {
  readonly kind: FailureKind;
  readonly status?: number;
  readonly attempts: number;
  constructor(kind: FailureKind, message: string, opts: { status?: number; attempts?: number } = {}) {
    super(message);
    this.name = 'EndpointError';
    this.kind = kind;
    this.status = opts.status;
    this.attempts = opts.attempts ?? 1;
  }
}

/** One HTTP (or engine) attempt, reported to observers so the ledger records retries as separate samples. */
export interface AttemptRecord {
  endpoint: string;
  attempt: number;
  startedAt: number;
  durationMs: number;
  status?: number;
  ok: boolean;
  failure?: { kind: FailureKind; message: string };
  /** sha256 of the request as sent (method, path, serialised body): equal across retries of one request. */
  requestHash: string;
  /** Which replica (position in `vllm:URL1,URL2,...`) the attempt went to, when there are several. */
  replica?: number;
  /** A hedge: a second attempt sent while the first was still slower than its peers. */
  hedge?: boolean;
}

export type AttemptObserver = (record: AttemptRecord) => void;
