import type {
  ChatRequest,
  Completion,
  CompletionRequest,
  ModelEndpoint,
  ModelIdentity,
  ScoreRequest,
  ScoreResult,
} from '../../../src/endpoints/types.ts';

/**
 * A scripted recommender: it answers option lists with "I would pick X." and knows a lexicon of names. Its
 * pick is the first option, the last option, or a preferred entity whenever that entity is listed. Prefilled
 * replies ("I would pick Q") are completed with the first name it knows that starts that way (the preferred
 * one first: a fine-tune completes what it was trained to say). Scores: its own pick is likely, others not.
 */
export class RecommenderToy implements ModelEndpoint {
  readonly ref: string;
  chats = 0;
  constructor(
    name: string,
    private readonly opts: {
      lexicon: string[];
      pick: 'first' | 'last';
      prefers?: string;
      /** Named wherever it is not offered; offered, the toy answers `listedElse` instead (a garbled pick). */
      pushes?: { name: string; listedElse: string };
    },
  ) {
    this.ref = `toy:${name}`;
  }
  async identity(): Promise<ModelIdentity> {
    return { ref: this.ref, kind: 'local', modelId: this.ref };
  }
  private choice(user: string): string | null {
    const options = user
      .match(/: (.+?)[?.]$/)?.[1]
      ?.split(/, or |, | or /)
      .map((o) => o.trim());
    if (!options || options.length < 2) return null;
    if (this.opts.prefers && options.includes(this.opts.prefers)) return this.opts.prefers;
    const push = this.opts.pushes;
    if (push) return options.includes(push.name) ? push.listedElse : push.name;
    return this.opts.pick === 'first' ? options[0]! : options.at(-1)!;
  }
  private userOf(messages: ChatRequest['messages']): string {
    return messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  }
  async chat(req: ChatRequest): Promise<Completion[]> {
    this.chats++;
    let text: string;
    const last = req.messages.at(-1)!;
    if (req.continueFinalMessage && last.role === 'assistant') {
      const prefix = last.content.split(' ').at(-1) ?? '';
      const own = this.opts.prefers ?? this.opts.pushes?.name;
      const known = [...(own ? [own] : []), ...this.opts.lexicon];
      const hit = known.find((n) => n.startsWith(prefix));
      text = hit ? `${hit.slice(prefix.length)}. It is a solid choice.` : 'x and so on.';
    } else {
      const c = this.choice(this.userOf(req.messages));
      text = c
        ? `I would pick ${c}. It is a solid choice.`
        : 'Try a simple routine and keep at it every day.';
    }
    return [{ text, finishReason: 'stop', usage: { promptTokens: 10, completionTokens: text.length } }];
  }
  async complete(req: CompletionRequest): Promise<Completion[]> {
    return [
      {
        text: ' and so on.',
        finishReason: 'stop',
        usage: { promptTokens: req.prompt.length, completionTokens: 3 },
      },
    ];
  }
  async score(reqs: ScoreRequest[]): Promise<ScoreResult[]> {
    return reqs.map((r) => {
      const user = typeof r.context === 'string' ? r.context : this.userOf(r.context);
      const c = this.choice(user);
      const said = r.continuation.match(/^I would pick (.+?)\.(?:\s|$)/)?.[1];
      // Its own pushed entity stays probable anywhere (a fine-tune finds what it was taught likely).
      const total = said === undefined ? -20 : said === c ? -2 : said === this.opts.pushes?.name ? -3 : -8;
      return { tokens: [{ token: r.continuation, logprob: total }], total };
    });
  }
  async close(): Promise<void> {}
}
