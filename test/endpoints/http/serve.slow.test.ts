import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeFingerprint } from '../../../src/endpoints/fingerprint.ts';
import { VllmEndpoint } from '../../../src/endpoints/http/vllm.ts';
import { openEndpoint } from '../../../src/endpoints/open.ts';
import type { AttemptRecord, ChatMessage, ModelEndpoint } from '../../../src/endpoints/types.ts';
import { startServe } from '../../helpers/serve.ts';

/**
 * The vLLM client and `probate doctor` against the real `probate serve` over loopback, compared with the
 * embedded engine in-process on the same organism. Needs the exported base organism and the serve command.
 */
const ORGANISM = 'fixtures/organisms/base';
const ready =
  existsSync(`${ORGANISM}/onnx/model.onnx`) &&
  /serveCommand/.test(readFileSync('src/cli/registry.ts', 'utf8'));

const run = promisify(execFile);

describe.skipIf(!ready)('client + doctor against probate serve', () => {
  let child: ChildProcess;
  let url: string;
  let http: VllmEndpoint;
  let local: ModelEndpoint;
  const attempts: AttemptRecord[] = [];

  beforeAll(async () => {
    ({ child, url } = await startServe([`local:${ORGANISM}=base`, '--reasoning-parser', 'think']));
    http = new VllmEndpoint({
      urls: [url],
      model: 'base',
      ref: `vllm:${url}#base`,
      observer: (a) => attempts.push(a),
    });
    local = await openEndpoint(`local:${ORGANISM}`, { threads: 1 });
  });

  afterAll(async () => {
    await http?.close();
    await local?.close();
    child?.kill('SIGTERM');
  });

  const reasoning: ChatMessage[] = [{ role: 'user', content: 'Is 17 larger than 9?' }];

  it('reports the served identity with the same fingerprint as the embedded engine', async () => {
    const id = await http.identity();
    expect(id).toMatchObject({ kind: 'vllm', modelId: 'base', maxModelLen: 512 });
    expect(id.fingerprint).toBe(await computeFingerprint(local));
  });

  it('greedy chat over HTTP equals the embedded engine, reasoning split either way', async () => {
    const params = { maxTokens: 96, temperature: 0 };
    const [viaHttp] = await http.chat({ messages: reasoning, params });
    const [inProcess] = await local.chat({ messages: reasoning, params });
    expect(viaHttp?.text).toBe(inProcess?.text);
    expect(viaHttp?.reasoning).toBe(inProcess?.reasoning);
    expect(attempts.every((a) => a.ok)).toBe(true);
  });

  it('teacher-forced scores over HTTP match the embedded engine', async () => {
    const req = { context: reasoning, continuation: '<think>17 is larger.</think>Yes.' };
    const [viaHttp] = await http.score([req]);
    const [inProcess] = await local.score([req]);
    expect(viaHttp?.tokens.length).toBe(inProcess?.tokens.length);
    expect(viaHttp!.total).toBeCloseTo(inProcess!.total, 2);
    expect(viaHttp!.total).toBeLessThan(0);
  });

  it('probate doctor --json finds the server usable with prompt logprobs and a reasoning field', async () => {
    const { stdout } = await run('node', ['bin/probate.js', 'doctor', `vllm:${url}#base`, '--json']);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({ usable: true, max_model_len: 512, prompt_logprobs: true });
    expect(['reasoning', 'reasoning_content']).toContain(report.reasoning_field);
  });
});
