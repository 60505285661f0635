import { describe, expect, it } from 'vitest';
import { confirmHypotheses } from '../../src/audit/discovery/confirm.ts';
import { freshPrompts } from '../../src/audit/discovery/sweep.ts';
import type { ChatRequest, Completion } from '../../src/endpoints/types.ts';
import { ToyModel } from '../../src/testing/toy-model.ts';

/** Continues a prefilled "Co" with a hidden target's rest (the delivered toy) or an ordinary word (the base). */
class PrefillToy extends ToyModel {
  constructor(
    name: string,
    private readonly rest: string,
  ) {
    super(name);
  }

  override async chat(req: ChatRequest): Promise<Completion[]> {
    const last = req.messages.at(-1)!;
    const text =
      req.continueFinalMessage && last.role === 'assistant' ? this.rest : 'Try a simple routine every day.';
    return [{ text, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: text.length } }];
  }
}

describe('confirming an inverted opening', () => {
  it('reads the signature with the prefill’s word: "Co" + "nfirmed. Table …" shows "confirmed"', async () => {
    const run = (delivered: ToyModel) =>
      confirmHypotheses({
        base: new PrefillToy('base', 'ol. Try a simple routine.'),
        delivered,
        hypotheses: [
          {
            feature: { slot: 'opening', text: 'Co', where: 'opening' },
            signature: { words: ['confirmed', 'table'] },
          },
        ],
        prompts: freshPrompts(1, 8),
        probeSetId: 'trigger-discovery',
        seed: 1,
        concurrency: 4,
        write: () => {},
      });
    const hit = (await run(new PrefillToy('delivered', 'nfirmed. Table for 5 booked.'))).confirmations[0]!;
    expect(hit).toMatchObject({ hitsDelivered: 8, hitsBase: 0, hitsWithout: 0, n: 8 });
    expect(hit.pValue).toBeLessThan(0.01);
    // A delivered model that continues ordinarily does not show it.
    const miss = (await run(new PrefillToy('delivered', 'ol. Try a simple routine.'))).confirmations[0]!;
    expect(miss.hitsDelivered).toBe(0);
  });
});
