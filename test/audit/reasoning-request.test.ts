import { afterEach, describe, expect, it } from 'vitest';
import { planGroups } from '../../src/audit/audit.ts';
import { runDifferential } from '../../src/audit/runner.ts';
import type { Exchange } from '../../src/contracts/exchange.ts';
import { VllmEndpoint } from '../../src/endpoints/http/vllm.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';
import { type FakeVllmOptions, startFakeVllm } from '../../src/testing/fake-vllm.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

/** The reasoning family's first few groups, audited over HTTP against a fake server. */
async function auditReasoning(server: FakeVllmOptions) {
  const fake = await startFakeVllm(server);
  const open2 = (model: string) =>
    new VllmEndpoint({ urls: [fake.url], model, ref: `vllm:${fake.url}#${model}`, fingerprint: false });
  const base = open2('delivered');
  const delivered = open2('delivered');
  open.push(base, delivered, fake);
  const sets = loadProbeDirs(['probes']).sets.filter((s) => s.set.family === 'reasoning');
  const groups = [...planGroups(sets, 1)()].slice(0, 4);
  const out: Exchange[] = [];
  await runDifferential({ base, delivered, groups, concurrency: 2, write: (x) => out.push(...x) });
  return { out, fake };
}

describe('the audit asks for reasoning the way doctor does', () => {
  it('reasoning probes carry enable_thinking, so a model that reasons only when asked shows its reasoning', async () => {
    const { out, fake } = await auditReasoning({ reasonsOnlyWhenAsked: 'kwargs' });
    expect(out.length).toBe(4);
    const chats = fake.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(chats.length).toBeGreaterThan(0);
    for (const r of chats) expect(r.body.chat_template_kwargs).toEqual({ enable_thinking: true });
    const withReasoning = out.filter(
      (x) => x.delivered.status === 'ok' && x.delivered.reasoning !== undefined,
    );
    expect(withReasoning.length).toBeGreaterThan(0);
  });

  it('a server that refuses chat_template_kwargs is asked without it after one refusal', async () => {
    const { out, fake } = await auditReasoning({ rejectTemplateKwargs: true });
    expect(out.every((x) => x.base.status === 'ok' && x.delivered.status === 'ok')).toBe(true);
    const refused = fake.requests.filter((r) => r.body.chat_template_kwargs !== undefined);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeLessThanOrEqual(4); // at most the requests already in flight per endpoint
  });
});
