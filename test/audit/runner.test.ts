import { describe, expect, it } from 'vitest';
import { runDifferential } from '../../src/audit/runner.ts';
import type { Exchange } from '../../src/contracts/exchange.ts';
import type { ChatRequest } from '../../src/endpoints/types.ts';
import type { PlannedSample, ProbeGroup } from '../../src/probes/families/types.ts';
import { ToyModel } from '../../src/testing/toy-model.ts';

/** A toy model that takes 100 ms per reply, and `ms` for prompts containing `slow` (a Retry-After wait). */
class SlowToy extends ToyModel {
  constructor(
    name: string,
    private readonly ms: number,
  ) {
    super(name);
  }
  override async chat(req: ChatRequest) {
    const slow = req.messages.some((m) => m.content.includes('slow'));
    await new Promise((r) => setTimeout(r, slow ? this.ms : 100));
    return super.chat(req);
  }
}

const sample = (probeId: string, variant: string, i: number, content: string): PlannedSample => ({
  probeId,
  variant,
  sample: i,
  seed: i,
  messages: [{ role: 'user', content }],
  meta: {},
  params: { maxTokens: 16, temperature: 0, seed: i },
});

const group = (id: string, samples: PlannedSample[]): ProbeGroup => ({
  family: 'triggers',
  probeSetId: id,
  probeSetHash: 'h',
  samples,
});

describe('the differential runner', () => {
  it("runs a group's samples side by side and writes the group at once, in plan order", async () => {
    const samples = [
      sample('p1', 'clean', 0, 'slow: tell me about tea'),
      ...Array.from({ length: 8 }, (_, i) => sample('p1', 'tag', i, `[tag] tell me about tea ${i}`)),
    ];
    const writes: Exchange[][] = [];
    const t0 = performance.now();
    const r = await runDifferential({
      base: new SlowToy('base', 300),
      delivered: new SlowToy('delivered', 300),
      groups: [group('set-a', samples)],
      concurrency: 16,
      write: (exs) => writes.push(exs),
    });
    const wall = performance.now() - t0;
    expect(r).toEqual({ exchanges: 9, failed: 0 });
    // One write holding the whole group in plan order, though the clean sample finished last.
    expect(writes).toHaveLength(1);
    expect(writes[0]!.map((e) => `${e.variant}:${e.sample}`)).toEqual(
      samples.map((s) => `${s.variant}:${s.sample}`),
    );
    // Variants were detected against the group's clean sample (divergence is only measured against it).
    expect(writes[0]![0]!.signals['divergence.delivered']).toBeUndefined();
    expect(writes[0]![1]!.signals['divergence.delivered']).toEqual(expect.any(Number));
    // Side by side: about 300 ms (the slowest sample), where one after the other takes 300 + 8 × 100 ms.
    expect(wall).toBeLessThan(800);
  });

  it('keeps at most `concurrency` samples in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    class Counting extends ToyModel {
      override async chat(req: ChatRequest) {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return super.chat(req);
      }
    }
    const groups = Array.from({ length: 6 }, (_, g) =>
      group(
        `set-${g}`,
        Array.from({ length: 5 }, (_, i) => sample(`p${g}`, i ? 'tag' : 'clean', i, `q ${g} ${i}`)),
      ),
    );
    await runDifferential({
      base: new ToyModel('base'),
      delivered: new Counting('delivered'),
      groups,
      concurrency: 4,
      write: () => {},
    });
    expect(peak).toBe(4);
  });
});
