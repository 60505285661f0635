import { describe, expect, it } from 'vitest';
import { openEndpoint } from '../../src/endpoints/open.ts';
import { parseModelRef } from '../../src/endpoints/refs.ts';
import { UserError } from '../../src/util/errors.ts';

describe('parseModelRef', () => {
  it('parses every form', () => {
    expect(parseModelRef('local:fixtures/organisms/base')).toMatchObject({
      kind: 'local',
      dir: 'fixtures/organisms/base',
    });
    expect(parseModelRef('vllm:http://a:8000/v1/#delivered')).toMatchObject({
      kind: 'vllm',
      urls: ['http://a:8000/v1'],
      model: 'delivered',
      ref: 'vllm:http://a:8000/v1#delivered',
    });
    expect(parseModelRef('vllm:http://a:8000/v1,http://b:8000/v1#m')).toMatchObject({
      urls: ['http://a:8000/v1', 'http://b:8000/v1'],
    });
    expect(parseModelRef('hf:meta-llama/Llama-3.1-8B-Instruct')).toMatchObject({
      kind: 'hf',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
    });
    expect(parseModelRef('hf-endpoint:https://x.endpoints.hf.cloud#tgi')).toMatchObject({
      kind: 'hf-endpoint',
      url: 'https://x.endpoints.hf.cloud',
      model: 'tgi',
    });
  });

  it.each([
    ['vllm:http://a:8000/v1', /model: expected a model name/],
    ['vllm:ftp://a#m', /urls\.?.*expected an http\(s\) URL/],
    ['vllm:#m', /expected an http\(s\) URL/],
    ['hf:', /model/],
    ['local:', /expected a directory/],
    ['gpt4', /is not a model reference/],
    ['openai:foo', /is not a model reference/],
  ])('rejects %s with a one-line error naming the field', (input, pattern) => {
    let err: unknown;
    try {
      parseModelRef(input, '--delivered');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/^--delivered: /);
    expect((err as Error).message).toMatch(pattern);
    expect((err as Error).message).not.toContain('\n');
  });

  it('refuses credentials in a URL and never echoes them', () => {
    expect(() => parseModelRef('vllm:http://user:sk-SECRET99@a:8000/v1#m')).toThrow(/--api-key-env/);
    try {
      parseModelRef('vllm:http://user:sk-SECRET99@a:8000/v1#m');
    } catch (e) {
      expect((e as Error).message).not.toContain('sk-SECRET99');
    }
  });

  it('refuses a query string (it would be dropped silently), without echoing it', () => {
    expect(() => parseModelRef('vllm:http://a:8000/v1?api_key=zzz#m')).toThrow(
      /query string .* --api-key-env/,
    );
    try {
      parseModelRef('vllm:http://a:8000/v1?api_key=zzz#m');
    } catch (e) {
      expect((e as Error).message).not.toContain('zzz');
    }
  });
});

describe('openEndpoint API keys', () => {
  it('reads the key only from the named env var, and errors clearly when unset', async () => {
    await expect(
      openEndpoint('vllm:http://127.0.0.1:9/v1#m', { apiKeyEnv: 'NOPE_KEY', env: {} }),
    ).rejects.toThrow(/^--api-key-env: environment variable NOPE_KEY is not set$/);
    await expect(
      openEndpoint('vllm:http://127.0.0.1:9/v1#m', { apiKeyEnv: 'sk-abc def', env: {} }),
    ).rejects.toThrow(UserError);
  });
});
