import { describe, expect, it } from 'vitest';
import { capabilitiesFor, parseVersion } from '../../../src/endpoints/http/capabilities.ts';
import { clampLogprob, LOGPROB_FLOOR } from '../../../src/endpoints/http/convert.ts';
import { errorMessage, httpFailure, parseRetryAfter } from '../../../src/endpoints/http/errors.ts';
import { splitReasoning } from '../../../src/endpoints/http/reasoning.ts';
import { nextDelay, retryPolicy } from '../../../src/endpoints/http/retry.ts';
import { sseData } from '../../../src/endpoints/http/sse.ts';

describe('Retry-After', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delta-seconds and HTTP dates, rejects junk', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('backoff: only retryable failures, bounded attempts, Retry-After as a floor', () => {
    const p = retryPolicy({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 });
    const e503 = httpFailure(503, '{}', '2', now);
    expect(nextDelay(p, e503, 1, () => 0)).toBe(2000);
    expect(nextDelay(p, e503, 1, () => 1)).toBe(2200);
    expect(nextDelay(p, e503, 3, () => 0)).toBeUndefined();
    const e500 = httpFailure(500, '{}', undefined, now);
    expect(nextDelay(p, e500, 2, () => 0.999)).toBeCloseTo(199.8);
    expect(nextDelay(p, httpFailure(400, '{}', undefined, now), 1, () => 0)).toBeUndefined();
    expect(nextDelay(p, httpFailure(429, '{}', '60', now), 1, () => 0)).toBeUndefined();
  });
});

describe('error bodies', () => {
  it('reads nested, flat, 401 and non-JSON bodies', () => {
    expect(
      errorMessage('{"error":{"message":"bad","type":"BadRequestError","param":null,"code":400}}'),
    ).toEqual({
      message: 'bad',
      shape: 'nested',
    });
    expect(errorMessage('{"object":"error","message":"old","type":"x","param":null,"code":400}')).toEqual({
      message: 'old',
      shape: 'flat',
    });
    expect(errorMessage('{"error":"Unauthorized"}').message).toBe('Unauthorized');
    expect(errorMessage('<html>502 Bad Gateway</html>').message).toBe('<html>502 Bad Gateway</html>');
  });
});

describe('capabilities by version', () => {
  it('maps versions to error shape and structured-output field', () => {
    expect(parseVersion('0.11.1rc2.dev12+gabc')).toEqual([0, 11, 1]);
    expect(parseVersion('dev')).toBeUndefined();
    expect(capabilitiesFor('0.10.0')).toMatchObject({
      errorShape: 'flat',
      structuredField: 'response_format',
    });
    expect(capabilitiesFor('0.10.1')).toMatchObject({ errorShape: 'nested' });
    expect(capabilitiesFor('0.12.0').structuredField).toBe('structured_outputs');
    expect(capabilitiesFor('1.0.0').structuredField).toBe('structured_outputs');
    expect(capabilitiesFor('0.5.0').structuredField).toBe('guided');
    expect(capabilitiesFor('0.12.0', 'response_format').structuredField).toBe('response_format');
  });
});

describe('reasoning split', () => {
  it.each([
    ['<think>r</think>a', undefined, { text: 'a', reasoning: 'r' }],
    ['r</think>a', undefined, { text: 'a', reasoning: 'r' }],
    ['<think>cut off', undefined, { text: '', reasoning: 'cut off' }],
    ['plain', undefined, { text: 'plain' }],
    ['answer', { reasoning: 'field' }, { text: 'answer', reasoning: 'field' }],
    ['answer', { reasoning: null, reasoning_content: 'old' }, { text: 'answer', reasoning: 'old' }],
  ])('%s', (content, fields, expected) => {
    expect(splitReasoning(content, fields)).toEqual(expected);
  });
});

describe('logprob floor', () => {
  it('maps -9999.0 clamps, -Infinity and null to one finite floor', () => {
    expect([-9999.0, -12000, Number.NEGATIVE_INFINITY, null].map(clampLogprob)).toEqual([
      LOGPROB_FLOOR,
      LOGPROB_FLOOR,
      LOGPROB_FLOOR,
      LOGPROB_FLOOR,
    ]);
    expect(clampLogprob(-3.5)).toBe(-3.5);
  });
});

describe('SSE', () => {
  it('collects data payloads until [DONE], tolerating CRLF and comments', () => {
    expect(sseData(': ping\r\n\r\ndata: {"a":1}\r\n\r\ndata: {"b":2}\n\ndata: [DONE]\n\n')).toEqual({
      events: ['{"a":1}', '{"b":2}'],
      done: true,
    });
    expect(sseData('data: {"a":1}\n\n').done).toBe(false);
  });
});
