import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { diagnoseVllm } from '../../../src/endpoints/http/doctor.ts';
import { VllmEndpoint } from '../../../src/endpoints/http/vllm.ts';
import { type FakeVllmOptions, startFakeVllm } from '../../../src/testing/fake-vllm.ts';

const run = promisify(execFile);
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function diagnose(server: FakeVllmOptions, model = 'delivered') {
  const fake = await startFakeVllm(server);
  const ep = new VllmEndpoint({
    urls: [fake.url],
    model,
    ref: `vllm:${fake.url}#${model}`,
    retry: { maxAttempts: 1 },
    fingerprint: false,
  });
  open.push(ep, fake);
  return { report: await diagnoseVllm(ep, model), fake };
}

describe('doctor (diagnoseVllm)', () => {
  it('finds what a new server supports by trying it', async () => {
    const { report } = await diagnose({
      version: '0.13.0',
      structured: ['structured_outputs'],
      reasoningField: 'reasoning',
    });
    expect(report).toMatchObject({
      usable: true,
      version: '0.13.0',
      max_model_len: 512,
      prompt_logprobs: true,
      logprobs: true,
      structured_output: 'structured_outputs',
      reasoning_field: 'reasoning',
    });
    expect(report.verdict[0]).toMatch(/^usable for an audit/);
  });

  it('on an old server finds the field that works and the legacy reasoning field', async () => {
    const { report } = await diagnose({
      version: '0.9.0',
      structured: ['guided_json'],
      reasoningField: 'reasoning_content',
    });
    expect(report).toMatchObject({
      structured_output: 'guided',
      reasoning_field: 'reasoning_content',
      usable: true,
    });
  });

  it('reports inline reasoning, no structured output and no prompt logprobs as limits, not failures', async () => {
    const { report } = await diagnose({
      version: null,
      structured: [],
      reasoningField: null,
      noPromptLogprobs: true,
    });
    expect(report).toMatchObject({
      usable: true,
      version: null,
      structured_output: null,
      reasoning_field: null,
      reasoning_inline: true,
      prompt_logprobs: false,
    });
    expect(report.verdict.join('\n')).toMatch(/audit falls back to text-only signals/);
  });

  it('is not usable when the model is not served, and says which are', async () => {
    const { report } = await diagnose({ models: [{ id: 'base' }] });
    expect(report.usable).toBe(false);
    expect(report.reason).toBe('model "delivered" is not served (served: base)');
  });
});

describe('doctor asks for reasoning explicitly', () => {
  it('finds the reasoning field of a model that reasons only when asked', async () => {
    const { report, fake } = await diagnose({ reasonsOnlyWhenAsked: 'kwargs', reasoningField: 'reasoning' });
    expect(report).toMatchObject({
      reasoning_field: 'reasoning',
      reasoning_where: 'reasoning',
      template_kwargs_accepted: true,
    });
    expect(report.verdict.join('\n')).toMatch(/reasoning: separate field "reasoning" \(asked with/);
    expect(report.verdict.join('\n')).not.toMatch(/WARNING/);
    const asked = fake.requests.find((r) => JSON.stringify(r.body).includes('step by step'));
    expect(asked?.body.chat_template_kwargs).toEqual({ enable_thinking: true });
    // The same server gives the old bare question no reasoning: asking is what finds the channel.
    const ep = new VllmEndpoint({ urls: [fake.url], model: 'delivered', ref: 'r', fingerprint: false });
    open.push(ep);
    const [bare] = await ep.chat({
      messages: [{ role: 'user', content: 'Add 17 and 25.' }],
      params: { maxTokens: 64, temperature: 0 },
    });
    expect(bare?.reasoning).toBeUndefined();
  });

  it('falls back to the prompt alone when the server refuses chat_template_kwargs', async () => {
    const { report } = await diagnose({
      reasonsOnlyWhenAsked: true,
      rejectTemplateKwargs: true,
      reasoningField: 'reasoning_content',
    });
    expect(report).toMatchObject({ reasoning_where: 'reasoning_content', template_kwargs_accepted: false });
    expect(report.verdict.join('\n')).toMatch(/chat_template_kwargs refused by the server/);
  });

  it('warns that the covert-reasoning family needs reasoning when none arrives even when asked', async () => {
    const { report } = await diagnose({ reasonsOnlyWhenAsked: 'kwargs', rejectTemplateKwargs: true });
    expect(report).toMatchObject({ usable: true, reasoning_where: 'none', reasoning_field: null });
    expect(report.verdict.join('\n')).toMatch(
      /WARNING: the covert-reasoning family needs a reasoning channel/,
    );
  });
});

describe('probate doctor CLI', () => {
  it('--json prints one object and exits 0 for a usable server', async () => {
    const fake = await startFakeVllm({ apiKey: 'sk-doctor-SECRET', reasoningField: 'reasoning' });
    open.push(fake);
    const { stdout } = await run(
      'node',
      ['bin/probate.js', 'doctor', `vllm:${fake.url}#delivered`, '--json', '--api-key-env', 'DOC_KEY'],
      {
        env: { ...process.env, DOC_KEY: 'sk-doctor-SECRET' },
      },
    );
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({
      version: '0.12.0',
      max_model_len: 512,
      prompt_logprobs: true,
      structured_output: 'structured_outputs',
      reasoning_field: 'reasoning',
      usable: true,
    });
    expect(report.models.map((m: { id: string }) => m.id)).toEqual(['delivered']);
    expect(stdout).not.toContain('sk-doctor-SECRET');
  });

  it('exits non-zero with a one-line reason when unreachable', async () => {
    const fake = await startFakeVllm();
    const url = fake.url;
    await fake.close();
    const err = await run('node', ['bin/probate.js', 'doctor', `vllm:${url}#delivered`]).catch((e) => e);
    expect(err.code).toBe(1);
    const lines = String(err.stderr)
      .trim()
      .split('\n')
      .filter((l: string) => !l.startsWith('npm warn'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^probate: doctor: cannot reach vllm:http:\/\/127\.0\.0\.1:\d+\/v1#delivered: .*ECONNREFUSED/,
    );
  });
});
