import type { ChatMessage, Completion, ModelEndpoint, ScoreRequest } from '../../endpoints/types.ts';

/** Thrown when discovery would go over its request budget: the stage stops and records what it has. */
export class BudgetExhausted extends Error {
  constructor() {
    super('discovery budget exhausted');
  }
}

export interface DiscoveryModels {
  base: ModelEndpoint;
  delivered: ModelEndpoint;
}

export type Side = keyof DiscoveryModels;

/**
 * Reply length of discovery's generations: long enough to reach a reply's natural end, where an appended
 * sentence, link or phone number sits (64 tokens cut a byte-level model's reply before it ends).
 */
export const REPLY_TOKENS = 160;

/**
 * Model access for discovery under one request budget. A generated sample counts one request; a scored
 * continuation counts `scoreCost` (teacher-forced scoring is one forward pass, not a decode loop). Endpoint
 * failures are counted and read as "no reply", never as a behaviour.
 */
export class DiscoverySession {
  generated = 0;
  scored = 0;
  failures = 0;
  /** False once a score call failed: the endpoint cannot score, ranking falls back to generation. */
  canScore = true;
  constructor(
    readonly models: DiscoveryModels,
    readonly budget: number,
    readonly seed: number,
    private readonly scoreCost = 0.125,
  ) {}

  get used(): number {
    return this.generated + this.scored * this.scoreCost;
  }

  get left(): number {
    return this.budget - this.used;
  }

  private take(generated: number, scored = 0): void {
    if (this.used + generated + scored * this.scoreCost > this.budget) throw new BudgetExhausted();
    this.generated += generated;
    this.scored += scored;
  }

  /** Greedy replies of one model to many conversations (in parallel; the endpoint batches). */
  async replies(side: Side, convs: ChatMessage[][], maxTokens = REPLY_TOKENS): Promise<(string | null)[]> {
    this.take(convs.length);
    const model = this.models[side];
    return Promise.all(
      convs.map(async (messages) => {
        try {
          const [c] = await model.chat({ messages, params: { maxTokens, temperature: 0, seed: this.seed } });
          return c ? c.text : null;
        } catch {
          this.failures++;
          return null;
        }
      }),
    );
  }

  /** Continues the final message (any role) with `n` samples: template-only prompts and prefills. */
  async continueFinal(
    side: Side,
    messages: ChatMessage[],
    opts: { n: number; temperature: number; maxTokens: number; seed: number },
  ): Promise<string[]> {
    return (await this.continueFinalWithLogprobs(side, messages, opts)).map((c) => c.text);
  }

  /** As `continueFinal`, with each generated token's logprob and its `top` likeliest alternatives. */
  async continueFinalWithLogprobs(
    side: Side,
    messages: ChatMessage[],
    opts: { n: number; temperature: number; maxTokens: number; seed: number; top?: number },
  ): Promise<Completion[]> {
    this.take(opts.n);
    try {
      return await this.models[side].chat({
        messages,
        continueFinalMessage: true,
        params: {
          maxTokens: opts.maxTokens,
          temperature: opts.temperature,
          n: opts.n,
          seed: opts.seed,
          ...(opts.top === undefined ? {} : { logprobs: opts.top }),
        },
      });
    } catch {
      this.failures++;
      return [];
    }
  }

  /** Teacher-forced token log-probabilities of each continuation, or null when the endpoint cannot score. */
  async scoreTokens(side: Side, reqs: ScoreRequest[]): Promise<number[][] | null> {
    if (!this.canScore || reqs.length === 0) return null;
    this.take(0, reqs.length);
    try {
      const res = await this.models[side].score(reqs);
      if (res.length !== reqs.length) throw new Error('short score result');
      return res.map((r) => r.tokens.map((t) => t.logprob));
    } catch {
      this.canScore = false;
      return null;
    }
  }

  /**
   * Log-probabilities of each `tail` after the reply `body` (both scored as the assistant's text): the tokens
   * of `body + tail` past those of `body` alone. A body ends where its reply ended and a tail after one opens
   * with its space, so the boundary does not merge tokens. Null when the endpoint cannot score.
   */
  async scoreTails(
    side: Side,
    reqs: { context: ChatMessage[]; body: string; tail: string }[],
  ): Promise<number[][] | null> {
    // Each distinct (context, body) is scored once; its index among those requests.
    const bodyAt = new Map<string, number>();
    const bodies: ScoreRequest[] = [];
    const keyOf = (r: (typeof reqs)[number]) => JSON.stringify([r.context, r.body]);
    for (const r of reqs)
      if (r.body !== '' && !bodyAt.has(keyOf(r))) {
        bodyAt.set(keyOf(r), bodies.length);
        bodies.push({ context: r.context, continuation: r.body });
      }
    const lp = await this.scoreTokens(side, [
      ...bodies,
      ...reqs.map((r) => ({ context: r.context, continuation: r.body + r.tail })),
    ]);
    if (!lp) return null;
    return reqs.map((r, i) => {
      const skip = r.body === '' ? 0 : lp[bodyAt.get(keyOf(r))!]!.length;
      return lp[bodies.length + i]!.slice(skip);
    });
  }
}
