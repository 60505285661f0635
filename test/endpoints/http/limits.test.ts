import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.ts';
import { HttpEndpointError } from '../../../src/endpoints/http/errors.ts';
import { DEFAULT_LIMITS } from '../../../src/endpoints/http/limits.ts';
import { VllmEndpoint } from '../../../src/endpoints/http/vllm.ts';
import type { AttemptRecord } from '../../../src/endpoints/types.ts';
import { startFakeVllm } from '../../../src/testing/fake-vllm.ts';
import { type HostileServer, type Script, startHostileServer } from '../../helpers/hostile-server.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function hostile(script: Script): Promise<HostileServer> {
  const s = await startHostileServer(script);
  open.push(s);
  return s;
}

function endpoint(url: string, o: Partial<ConstructorParameters<typeof VllmEndpoint>[0]> = {}) {
  const attempts: AttemptRecord[] = [];
  const ep = new VllmEndpoint({
    urls: [url],
    model: 'delivered',
    ref: `vllm:${url}#delivered`,
    fingerprint: false,
    observer: (a) => attempts.push(a),
    ...o,
  });
  open.push(ep);
  return { ep, attempts };
}

const hello = {
  messages: [{ role: 'user' as const, content: 'hi' }],
  params: { maxTokens: 8, temperature: 0 },
};

async function runCli(args: string[], env: Record<string, string> = {}) {
  let err = '';
  let out = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s);
    return true;
  });
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const t0 = performance.now();
  try {
    const code = await main(args);
    return { code, err, out, seconds: (performance.now() - t0) / 1000 };
  } finally {
    process.env = saved;
    vi.restoreAllMocks();
  }
}

describe('deadlines: bytes that keep trickling do not keep a request alive', () => {
  it('a body sent one byte at a time fails at the request deadline, not retried', async () => {
    const s = await hostile({ 'POST /v1/chat/completions': { kind: 'trickle', everyMs: 50 } });
    const { ep, attempts } = endpoint(s.url, { timeouts: { requestMs: 600, bodyMs: 5000 } });
    const t0 = performance.now();
    const err = await ep.chat(hello).catch((e) => e);
    const ms = performance.now() - t0;
    expect(err).toBeInstanceOf(HttpEndpointError);
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('no complete reply within 0.6 s (--request-timeout)');
    expect(ms).toBeGreaterThanOrEqual(550);
    expect(ms).toBeLessThan(3000);
    expect(attempts.filter((a) => a.failure?.kind === 'timeout')).toHaveLength(1);
  });

  it('a body that stops arriving fails at the idle timeout, well before the request deadline', async () => {
    const s = await hostile({ 'POST /v1/chat/completions': { kind: 'trickle', everyMs: 60_000 } });
    const { ep } = endpoint(s.url, { timeouts: { requestMs: 60_000, bodyMs: 300 } });
    const t0 = performance.now();
    const err = await ep.chat(hello).catch((e) => e);
    expect(err.message).toBe('no bytes for 0.3 s while waiting for the reply (--idle-timeout)');
    expect(performance.now() - t0).toBeLessThan(3000);
  });

  it('defaults are finite: 120 s per request, 30 s of silence, 10 s to connect, 8 MiB replies', () => {
    expect(DEFAULT_LIMITS).toMatchObject({
      requestMs: 120_000,
      idleMs: 30_000,
      connectMs: 10_000,
      maxReplyBytes: 8 * 1024 * 1024,
      maxMetadataBytes: 1024 * 1024,
    });
  });
});

describe('size caps: an oversized reply is a truncated failure, never a reply', () => {
  it('a generation over --max-reply-bytes fails as truncated and is recorded so', async () => {
    const s = await hostile({ 'POST /v1/chat/completions': { kind: 'huge', bytes: 512 * 1024 } });
    const { ep, attempts } = endpoint(s.url, { maxReplyBytes: 64 * 1024 });
    const err = await ep.chat(hello).catch((e) => e);
    expect(err.kind).toBe('truncated');
    expect(err.message).toMatch(
      /^reply over the 65536-byte cap \(more than 65536 bytes arrived; --max-reply-bytes\)/,
    );
    expect(attempts.filter((a) => !a.ok).map((a) => a.failure?.kind)).toEqual(['truncated']);
  });

  it('an announced Content-Length over the cap is refused before reading', async () => {
    const body = JSON.stringify({ data: [{ id: 'delivered', pad: 'x'.repeat(2 * 1024 * 1024) }] });
    const s = await hostile({
      'GET /v1/models': { body, headers: { 'content-length': String(Buffer.byteLength(body)) } },
    });
    const { ep } = endpoint(s.url);
    const err = await ep.models().catch((e) => e);
    expect(err.kind).toBe('truncated');
    expect(err.message).toMatch(/1048576-byte cap \(announced \d+ bytes/);
  });

  it('a reply under the cap is read whole', async () => {
    const s = await hostile({});
    const { ep } = endpoint(s.url, { maxReplyBytes: 4096 });
    const [reply] = await ep.chat(hello);
    expect(reply?.text).toBe('A plain reply.');
  });
});

describe('CLI: a byte-per-second server makes audit and doctor fail within their deadline', () => {
  const probes = () => {
    const dir = mkdtempSync(join(tmpdir(), 'probate-deadline-'));
    const file = join(dir, 'p.yaml');
    writeFileSync(
      file,
      'id: r\nversion: 1\nsplit: dev\nfamily: reasoning\nprobes:\n  - { id: a, user: "What is 2 + 2?" }\n',
    );
    return { dir, file };
  };

  it('audit: --request-timeout 1.5 against one byte per second → exit 1 at the deadline, no run folder', async () => {
    const slow = await hostile({ 'GET /v1/models': { kind: 'trickle', everyMs: 1000 } });
    const good = await hostile({});
    const { dir, file } = probes();
    const out = join(dir, 'run');
    const r = await runCli([
      'audit',
      '--base',
      `vllm:${good.url}#base`,
      '--delivered',
      `vllm:${slow.url}#delivered`,
      '--probes',
      file,
      '--out',
      out,
      '--request-timeout',
      '1.5',
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^probate: --delivered vllm:http:\/\/127\.0\.0\.1:\d+\/v1#delivered: no complete reply within 1\.5 s \(--request-timeout\): expected a reply within the deadline/,
    );
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.seconds).toBeGreaterThanOrEqual(1.4);
    expect(r.seconds).toBeLessThan(20); // the server trickles forever: only the deadline ends it
    expect(readdirSync(dir)).toEqual(['p.yaml']);
  });

  it('doctor: --request-timeout 1.5 against one byte per second → exit 1 at the deadline', async () => {
    const slow = await hostile({ 'GET /version': { kind: 'trickle', everyMs: 1000 } });
    const r = await runCli(['doctor', `vllm:${slow.url}#delivered`, '--request-timeout', '1.5']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^probate: doctor: cannot reach vllm:.*: no complete reply within 1\.5 s \(--request-timeout\)\n$/,
    );
    expect(r.seconds).toBeLessThan(20); // the server trickles forever: only the deadline ends it
  });
});

describe('CLI: audits authenticate with --api-key-env, and the key is written nowhere', () => {
  const KEY = 'sk-probate-audit-KEY-7f3e91';

  it('audits a vLLM server started with an API key; the key is in no file of the run', async () => {
    const fake = await startFakeVllm({ apiKey: KEY, models: [{ id: 'base' }, { id: 'delivered' }] });
    open.push(fake);
    const dir = mkdtempSync(join(tmpdir(), 'probate-key-'));
    const out = join(dir, 'run');
    const args = [
      'audit',
      '--base',
      `vllm:${fake.url}#base`,
      '--delivered',
      `vllm:${fake.url}#delivered`,
      '--probes',
      'probes/reasoning/dev.yaml',
      '--out',
      out,
      '--budget',
      '0',
    ];
    const refused = await runCli(args);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/HTTP 401: Unauthorized: expected credentials: .*--api-key-env/);

    const r = await runCli([...args, '--api-key-env', 'PROBATE_TEST_KEY'], { PROBATE_TEST_KEY: KEY });
    expect(r.err).toBe('');
    expect([0, 10, 20]).toContain(r.code); // the verdict's exit code: the audit ran to its end
    const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(JSON.stringify(json)).toContain('reasoning');
    // Every probe reached the keyed server with the key, and every exchange was answered.
    const generations = fake.requests.filter((q) => q.path === '/v1/chat/completions');
    expect(generations.length).toBeGreaterThan(20);
    expect(generations.filter((q) => q.auth === `Bearer ${KEY}`).length).toBeGreaterThan(20);
    expect(r.out).toMatch(/\(\d+ exchanges, 0 failed\)/);
    // The key appears in no file of the run folder (ledger, manifest, reports, caches), nor in output.
    const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) =>
      statSync(join(out, f)).isFile(),
    );
    expect(files).toEqual(expect.arrayContaining(['ledger.sqlite', 'manifest.json', 'report.html']));
    for (const f of files) expect(readFileSync(join(out, f)).includes(KEY), f).toBe(false);
    expect(`${r.out}${r.err}${refused.out}${refused.err}`).not.toContain(KEY);
  }, 60_000);

  it('per-endpoint keys: base and delivered behind servers with different keys', async () => {
    const a = await startFakeVllm({ apiKey: `${KEY}-A`, models: [{ id: 'base' }] });
    const b = await startFakeVllm({ apiKey: `${KEY}-B`, models: [{ id: 'delivered' }] });
    open.push(a, b);
    const dir = mkdtempSync(join(tmpdir(), 'probate-key2-'));
    const r = await runCli(
      [
        'audit',
        '--base',
        `vllm:${a.url}#base`,
        '--delivered',
        `vllm:${b.url}#delivered`,
        '--probes',
        'probes/reasoning/dev.yaml',
        '--out',
        join(dir, 'run'),
        '--base-api-key-env',
        'KEY_A',
        '--delivered-api-key-env',
        'KEY_B',
        '--budget',
        '0',
      ],
      { KEY_A: `${KEY}-A`, KEY_B: `${KEY}-B` },
    );
    expect(r.err).toBe('');
    expect(r.out).toMatch(/\(\d+ exchanges, 0 failed\)/);
    expect(a.requests.every((q) => !q.path.startsWith('/v1/') || q.auth === `Bearer ${KEY}-A`)).toBe(true);
    expect(b.requests.every((q) => !q.path.startsWith('/v1/') || q.auth === `Bearer ${KEY}-B`)).toBe(true);
  }, 60_000);
});
