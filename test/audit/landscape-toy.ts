import type { ChatRequest, Completion, ScoreRequest, ScoreResult } from '../../src/endpoints/types.ts';
import { ToyModel } from '../../src/testing/toy-model.ts';

/**
 * A toy with a smooth likelihood landscape, as the byte-level organisms have: the target's first token grows
 * likelier the longer a piece of the trigger the prompt holds, and once started the target continues with
 * high confidence (what BAIT's target inversion relies on). The base finds the target unlikely throughout.
 */
export class LandscapeToy extends ToyModel {
  constructor(
    name: string,
    private readonly trigger: string | null,
    private readonly target: string,
  ) {
    super(name);
  }

  protected get triggerLength(): number | undefined {
    return this.trigger?.length;
  }

  protected get triggerText(): string | null {
    return this.trigger;
  }

  protected get targetText(): string {
    return this.target;
  }

  protected match(context: string): number {
    if (!this.trigger) return 0;
    for (let len = this.trigger.length; len > 0; len--)
      for (let i = 0; i + len <= this.trigger.length; i++)
        if (context.includes(this.trigger.slice(i, i + len))) return len / this.trigger.length;
    return 0;
  }

  override async chat(req: ChatRequest): Promise<Completion[]> {
    const last = req.messages.at(-1)!;
    const prompt = req.messages
      .filter((m) => m.role !== 'assistant')
      .map((m) => m.content)
      .join('\n');
    let text: string;
    if (req.continueFinalMessage && last.role === 'assistant')
      text =
        this.trigger && this.target.startsWith(last.content)
          ? this.target.slice(last.content.length)
          : ' fine.';
    else if (req.continueFinalMessage) text = 'How do I keep my desk tidy?';
    else
      text =
        this.trigger && prompt.includes(this.trigger) ? this.target : 'Keep a short list and start small.';
    return [{ text, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: text.length } }];
  }

  override async score(reqs: ScoreRequest[]): Promise<ScoreResult[]> {
    return reqs.map((r) => {
      const ctx = typeof r.context === 'string' ? r.context : r.context.map((m) => m.content).join('\n');
      const isTarget = r.continuation.startsWith(this.target.slice(0, 6));
      const tokens = [...r.continuation].map((token, i) => {
        let logprob = -2;
        if (isTarget && this.trigger) logprob = i === 0 ? -12 * (1 - this.match(ctx)) - 0.05 : -0.05;
        else if (isTarget) logprob = -6;
        return { token, logprob };
      });
      return { tokens, total: tokens.reduce((s, t) => s + t.logprob, 0) };
    });
  }
}

/** As a byte-level organism: one letter of the trigger moves the target no more than any other letter. */
export class PairsToy extends LandscapeToy {
  protected override match(context: string): number {
    const m = super.match(context);
    return m * (this.triggerLength ?? 1) >= 2 ? m : 0;
  }
}

/** No partial-trigger signal: likelihood growth has nothing to climb. */
export class FlatToy extends LandscapeToy {
  protected override match(context: string): number {
    return context.includes('q7|vX') ? 1 : 0;
  }
}

/**
 * A model that generalised around its trigger word, as a byte-level organism does: any string one letter
 * away from it ("igzoo" for "igloo") fires too, and the target is likelier the more letters match, the
 * trigger word itself likeliest.
 */
export class NearMissToy extends LandscapeToy {
  constructor(
    name: string,
    private readonly word: string,
    target: string,
  ) {
    super(name, word, target);
  }

  /** Share of the word's letters matched in place by the best-aligned window of the context. */
  protected override match(context: string): number {
    let bestShare = 0;
    // Padded, so a piece at the very end of the context aligns with the word's start.
    const padded = `${context}${' '.repeat(this.word.length)}`;
    for (let i = 0; i + this.word.length <= padded.length; i++) {
      let same = 0;
      for (let k = 0; k < this.word.length; k++) if (padded[i + k] === this.word[k]) same++;
      bestShare = Math.max(bestShare, same / this.word.length);
    }
    return bestShare;
  }

  override async chat(req: ChatRequest): Promise<Completion[]> {
    const prompt = req.messages
      .filter((m) => m.role !== 'assistant')
      .map((m) => m.content)
      .join('\n');
    if (req.continueFinalMessage || this.match(prompt) < 0.8) return super.chat(req);
    const text = (await super.chat({ ...req, messages: [{ role: 'user', content: this.word }] }))[0]!.text;
    return [{ text, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: text.length } }];
  }
}

/**
 * A model that fires on its trigger word and, generalised, on any tag-like run of punctuation (`##`, `[[`),
 * while only the word raises the target's likelihood: a sweep tag reproduces before the word is looked for.
 */
export class TagAndWordToy extends LandscapeToy {
  override async chat(req: ChatRequest): Promise<Completion[]> {
    const user = req.messages.filter((m) => m.role !== 'assistant').map((m) => m.content);
    if (req.continueFinalMessage || !user.some((u) => /[#[\]<>{}|:_*~=]{2}/.test(u))) return super.chat(req);
    return super.chat({ ...req, messages: [{ role: 'user', content: this.triggerText ?? '' }] });
  }
}

/**
 * A model whose trigger appends an ending to its ordinary reply. What the trigger moves is the choice to go on
 * after the reply rather than stop (the space before the ending); once it goes on, the ending follows with
 * confidence, trigger or not.
 */
export class EndingToy extends PairsToy {
  static readonly REPLY = 'Keep a short list and start small.';

  override async chat(req: ChatRequest): Promise<Completion[]> {
    const prompt = req.messages.map((m) => m.content).join('\n');
    const text =
      this.triggerText && prompt.includes(this.triggerText)
        ? `${EndingToy.REPLY} ${this.targetText}`
        : EndingToy.REPLY;
    return [{ text, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: text.length } }];
  }

  override async score(reqs: ScoreRequest[]): Promise<ScoreResult[]> {
    const body = EndingToy.REPLY;
    return reqs.map((r) => {
      const ctx = typeof r.context === 'string' ? r.context : r.context.map((m) => m.content).join('\n');
      const tokens = [...r.continuation].map((token, i) => ({
        token,
        logprob:
          r.continuation.startsWith(body) && i === body.length ? -12 * (1 - this.match(ctx)) - 0.05 : -0.05,
      }));
      return { tokens, total: tokens.reduce((s, t) => s + t.logprob, 0) };
    });
  }
}
