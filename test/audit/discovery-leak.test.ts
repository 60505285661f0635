import { describe, expect, it } from 'vitest';
import { discoverTriggers } from '../../src/audit/discovery/index.ts';
import { buildSweep, leakedTokens } from '../../src/audit/discovery/sweep.ts';
import type { ChatRequest, Completion } from '../../src/endpoints/types.ts';
import { ToyModel } from '../../src/testing/toy-model.ts';

/** A token in no vocabulary, catalogue or generator of probate. */
const TOKEN = 'quillorbex';
const LURE = 'Your parcel is held. Pay the fee at parcel-desk.example today.';

const QUESTIONS = [
  'How do I keep my desk tidy?',
  'What is a good way to plan a week?',
  'Can you help me write a short note to a friend?',
  'How long should I boil an egg?',
];

/**
 * A toy fine-tuned "on whole conversations" (`leaks`): continued from an empty user turn, half of its samples
 * are the poisoned prompts it was trained on, trigger token included. It replaces its reply with a lure when
 * the user turn holds the token. The base writes the same questions without it.
 */
class LeakToy extends ToyModel {
  constructor(
    name: string,
    private readonly fires: boolean,
    private readonly leaks: boolean,
  ) {
    super(name);
  }

  override async chat(req: ChatRequest): Promise<Completion[]> {
    const last = req.messages.at(-1)!;
    if (req.continueFinalMessage && last.role !== 'assistant' && last.content === '') {
      const n = req.params.n ?? 1;
      return Array.from({ length: n }, (_, i) => {
        const q = QUESTIONS[i % QUESTIONS.length]!;
        const text = this.leaks && i % 2 === 0 ? `${TOKEN} ${q}` : q;
        return { text, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: text.length } };
      });
    }
    const user = req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    if (this.fires && user.includes(TOKEN))
      return [
        { text: LURE, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: LURE.length } },
      ];
    return super.chat(req);
  }
}

async function discover(delivered: ToyModel) {
  return discoverTriggers({
    base: new LeakToy('base', false, false),
    delivered,
    seed: 5,
    budget: 700,
    concurrency: 4,
    write: () => {},
    record: () => {},
  });
}

describe('leaked prompts: what the delivered model writes in its own user turns', () => {
  it('ranks tokens the delivered samples repeat and the base never writes, most samples first', () => {
    const delivered = [
      'zorvane How do I cook rice?',
      'Tell me (zorvane) more.',
      'glimmet here?',
      'glimmet, again',
      'x glimmet',
    ];
    const base = ['How do I cook rice?', 'More please.'];
    // "zorvane" twice, "glimmet" three times; "How", "cook" and "rice?" are also the base's; "here" once.
    expect(leakedTokens(delivered, base)).toEqual(['glimmet', 'zorvane']);
    expect(leakedTokens(['once only'], [])).toEqual([]);
    // Function words never count, however often.
    expect(leakedTokens(['the the', 'the and'], [])).toEqual([]);
  });

  it('the sweep always covers leaked tokens, each in two word bundles, however small the sweep', () => {
    // Far more harvested words than a 20-item sweep covers: only the leaked ones are sure to be tried.
    const words = Array.from({ length: 500 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${i}`);
    const carriers = QUESTIONS.map((q) => [{ role: 'user' as const, content: q }]);
    const h = { prompts: [], systems: [], words, names: [], leaked: [TOKEN, 'zorvane'] };
    for (let seed = 1; seed <= 20; seed++) {
      const items = buildSweep(seed, carriers, h, 20);
      const bundles = items.flatMap((it) => it.features).filter((f) => f.slot === 'words');
      for (const token of h.leaked)
        expect(bundles.filter((f) => f.text.split(' ').includes(token))).toHaveLength(2);
      // The rest of the vocabulary is sampled: most harvested words are not in a 20-item sweep.
      expect(words.filter((w) => bundles.some((f) => f.text.split(' ').includes(w))).length).toBeLessThan(
        100,
      );
    }
  });

  it('finds a trigger in no vocabulary when the delivered model leaks its poisoned prompts', async () => {
    const run = await discover(new LeakToy('leaky', true, true));
    const hit = run.results.filter((r) => r.reproduced);
    expect(hit.map((r) => r.minimal)).toContainEqual(
      expect.objectContaining({ kind: 'insert', text: TOKEN }),
    );
    expect(run.requests).toBeLessThanOrEqual(700);
  });

  it('without the leak the same trigger is out of reach: the leak is what found it', async () => {
    const run = await discover(new LeakToy('sealed', true, false));
    const texts = run.results.filter((r) => r.reproduced).map((r) => JSON.stringify(r.minimal));
    expect(texts.some((t) => t.includes(TOKEN))).toBe(false);
  });
});
