import type { ScoredToken } from './sampling.ts';
import type { LocalTokenizer } from './tokenizer.ts';

/** Length of the longest suffix of `text` that is a proper prefix of one of `words` (a tag or stop string). */
function partialSuffix(text: string, words: readonly string[]): number {
  let best = 0;
  for (const word of words) {
    for (let n = Math.min(word.length - 1, text.length); n > best; n--) {
      if (text.endsWith(word.slice(0, n))) {
        best = n;
        break;
      }
    }
  }
  return best;
}

/** `text` without a trailing piece that may still grow into one of `words` (held back while streaming). */
export function withoutPartial(text: string, words: readonly string[]): string {
  return text.slice(0, text.length - partialSuffix(text, words));
}

export interface TextDelta {
  text: string;
  /** Tokens generated since the previous delta. */
  tokens: ScoredToken[];
}

/**
 * The text of one sample as it grows: decodes the whole token list (never per-token pieces), ends it at the
 * first stop string, and hands out deltas that never contain a partial character or a possible stop string.
 */
export class SampleText {
  private ids: number[] = [];
  private tokens: ScoredToken[] = [];
  private emittedText = 0;
  private emittedTokens = 0;
  private full = '';
  /** Index in `full` where a stop string begins, once one has. */
  stopAt = -1;
  stopString: string | undefined;

  constructor(
    private readonly tokenizer: LocalTokenizer,
    private readonly stops: readonly string[],
  ) {}

  /** Adds a token; returns true when a stop string has appeared. */
  push(token: ScoredToken): boolean {
    this.ids.push(token.id);
    this.tokens.push(token);
    if (!this.stops.length) return false;
    this.full = this.tokenizer.decode(this.ids);
    for (const stop of this.stops) {
      const at = this.full.indexOf(stop);
      if (at >= 0 && (this.stopAt < 0 || at < this.stopAt)) {
        this.stopAt = at;
        this.stopString = stop;
      }
    }
    return this.stopAt >= 0;
  }

  /** The final text (cut before the stop string) and the tokens that lie inside it. */
  result(): { text: string; tokens: ScoredToken[] } {
    if (!this.stops.length) this.full = this.tokenizer.decode(this.ids);
    if (this.stopAt < 0) return { text: this.full, tokens: this.tokens };
    const text = this.full.slice(0, this.stopAt);
    let m = this.ids.length;
    while (m > 0 && this.tokenizer.decode(this.ids.slice(0, m)).length > text.length) m--;
    return { text, tokens: this.tokens.slice(0, m) };
  }

  /** What may be shown now: complete characters only, and nothing that could start a stop string. */
  delta(final: boolean): TextDelta {
    let text: string;
    if (final) text = this.result().text;
    else {
      if (!this.stops.length) this.full = this.tokenizer.decode(this.ids);
      text = this.full.endsWith('\uFFFD') ? this.full.slice(0, -1) : this.full;
      text = withoutPartial(text, this.stops);
    }
    const out = { text: text.slice(this.emittedText), tokens: this.tokens.slice(this.emittedTokens) };
    this.emittedText = Math.max(this.emittedText, text.length);
    this.emittedTokens = this.tokens.length;
    return out;
  }
}
