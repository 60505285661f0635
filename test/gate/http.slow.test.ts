import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGate } from '../../src/gate/client.ts';
import { initGate } from '../../src/gate/init.ts';
import { loadPublicKey } from '../../src/gate/keys.ts';
import { loadPolicy } from '../../src/gate/policy.ts';
import { addCaller } from '../../src/gate/trust.ts';
import { type RunSpec, writeRun } from './fixtures.ts';

/** A release receiver that applies each idempotency key once, then (optionally) drops the reply. */
function webhook(dropReply: () => boolean, apply: () => boolean = () => true) {
  const applied = new Map<string, unknown>();
  let promotions = 0;
  const server = createServer((req, res) => {
    const key = String(req.headers['idempotency-key'] ?? '');
    if (req.method === 'GET') {
      const got = applied.get(key) as { subjectDigest?: string } | undefined;
      res.writeHead(got ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ applied: Boolean(got), subjectDigest: got?.subjectDigest }));
      return;
    }
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      if (!applied.has(key) && apply()) {
        applied.set(key, JSON.parse(body));
        promotions += 1;
      }
      // The receipt echoes the subject digest the gate sent (the gate checks it).
      if (dropReply()) req.socket.destroy();
      else res.writeHead(200).end(JSON.stringify({ subjectDigest: JSON.parse(body).subjectDigest }));
    });
  });
  return { server, promotions: () => promotions };
}

const listenOn = (s: Server) =>
  new Promise<number>((ok) => s.listen(0, '127.0.0.1', () => ok((s.address() as AddressInfo).port)));

let root: string;
let gateDir: string;
let gateProc: ChildProcess;
let gateUrl: string;
let gateOutput = '';
/** Bearer tokens of callers with every scope / only `submit`. */
let token: string;
let submitOnly: string;
const env = (t?: string) => ({ ...process.env, PROBATE_GATE_TOKEN: t ?? '' });

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'gate-http-'));
  gateDir = join(root, 'gate');
  initGate(gateDir);
  const pub = loadPublicKey(join(gateDir, 'gate.pub'));
  token = addCaller(gateDir, pub, 'ops', ['submit', 'release', 'override']).token;
  submitOnly = addCaller(gateDir, pub, 'ci', ['submit']).token;
  mkdirSync(join(root, 'runs'));
  gateProc = spawn(
    process.execPath,
    ['bin/probate.js', 'gate', 'serve', '--gate', gateDir, '--port', '0', '--runs-root', join(root, 'runs')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  gateProc.stderr?.on('data', (d) => {
    gateOutput += d;
  });
  gateUrl = await new Promise<string>((ok, fail) => {
    gateProc.stdout?.on('data', (d) => {
      gateOutput += d;
      const m = /listening (http:\/\/[\d.]+:\d+)/.exec(gateOutput);
      if (m) ok(m[1]!);
    });
    gateProc.once('exit', (code) => fail(new Error(`gate serve exited ${code}: ${gateOutput}`)));
  });
});
afterAll(() => {
  gateProc?.kill('SIGTERM');
});

const policyHash = () => loadPolicy(join(gateDir, 'policy.yaml')).hash;
const runIn = (name: string, spec: Omit<RunSpec, 'policyHash'> = {}) =>
  writeRun(join(root, 'runs', name), { policyHash: policyHash(), ...spec });

describe('gate over HTTP (probate gate serve on loopback)', () => {
  it('decide via the CLI with --gate URL: exit 0 and an attestation; critical finding exits 20 without one', () => {
    const ok = runIn('ok', { lineage: 'ok', weights: 'ok' });
    const r = spawnSync(
      process.execPath,
      ['bin/probate.js', 'gate', 'decide', ok.runDir, '--gate', gateUrl, '--json'],
      { encoding: 'utf8', env: env(token) },
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).state).toBe('COMMITTABLE');
    expect(readdirSync(ok.runDir)).toContain('attestation.dsse.json');
    const bad = runIn('bad', {
      lineage: 'bad',
      weights: 'bad',
      findings: [{ id: 'injection:canary:1', family: 'injection', severity: 'critical' }],
    });
    const b = spawnSync(
      process.execPath,
      ['bin/probate.js', 'gate', 'decide', bad.runDir, '--gate', gateUrl],
      { encoding: 'utf8', env: env(token) },
    );
    expect(b.status).toBe(20);
    expect(b.stdout).toMatch(/^BLOCKED/);
    expect(readdirSync(bad.runDir)).not.toContain('attestation.dsse.json');
  });

  it('a lost reply leaves the release UNCERTAIN; a blind retry and a new mint are refused; reconcile settles; one promotion', async () => {
    let drop = true;
    const hook = webhook(() => drop);
    const port = await listenOn(hook.server);
    const target = `webhook:http://127.0.0.1:${port}/promote`;
    const run = runIn('hook', { lineage: 'hook', weights: 'hook' });
    const gate = openGate(gateUrl, env(token));
    const d = await gate.decide(run.runDir);
    expect(d.state).toBe('COMMITTABLE');

    const first = await gate.release(d.attestation, target, 2000);
    expect(first.state).toBe('UNCERTAIN');
    expect(hook.promotions()).toBe(1);

    drop = false;
    await expect(gate.release(d.attestation, target, 2000)).rejects.toThrow(/capability already reserved/);
    await expect(gate.decide(run.runDir)).rejects.toThrow(/UNCERTAIN/);
    expect(hook.promotions()).toBe(1);

    // Settling against a target that was never reserved is refused; the reservation stays.
    const other = webhook(() => false);
    const otherPort = await listenOn(other.server);
    await expect(
      gate.reconcile(run.runDir, `webhook:http://127.0.0.1:${otherPort}/elsewhere`),
    ).rejects.toThrow(/is not the reserved target/);
    await expect(gate.release(d.attestation, target, 2000)).rejects.toThrow(/capability already reserved/);
    other.server.close();
    const settled = await gate.reconcile(run.runDir);
    expect(settled.state).toBe('RELEASED');
    await expect(gate.release(d.attestation, target, 2000)).rejects.toThrow(/capability already consumed/);
    expect(hook.promotions()).toBe(1);
    hook.server.close();
  });

  it('refused connection: nothing promoted; dropped before applying: reconcile releases the reservation', async () => {
    const run = runIn('never', { lineage: 'never', weights: 'never' });
    const gate = openGate(gateUrl, env(token));
    const d = await gate.decide(run.runDir);
    const refused = await gate.release(d.attestation, 'webhook:http://127.0.0.1:1/unreachable', 500);
    expect(refused).toMatchObject({
      state: 'COMMITTABLE',
      detail: expect.stringMatching(/connection refused/),
    });

    let apply = false;
    const hook = webhook(
      () => true,
      () => apply,
    );
    const port = await listenOn(hook.server);
    const target = `webhook:http://127.0.0.1:${port}/promote`;
    expect((await gate.release(d.attestation, target, 1000)).state).toBe('UNCERTAIN');
    const rec = await gate.reconcile(run.runDir);
    expect(rec).toMatchObject({
      state: 'COMMITTABLE',
      detail: expect.stringMatching(/no record of the key/),
    });
    apply = true;
    const hook2 = webhook(
      () => false,
      () => true,
    );
    const port2 = await listenOn(hook2.server);
    expect((await gate.release(d.attestation, `webhook:http://127.0.0.1:${port2}/promote`, 1000)).state).toBe(
      'RELEASED',
    );
    expect(hook.promotions() + hook2.promotions()).toBe(1);
    hook.server.close();
    hook2.server.close();
  });

  it('unauthenticated or unscoped calls are 401/403; policy paths and runs outside the runs root are refused', async () => {
    const run = runIn('auth', { lineage: 'auth', weights: 'auth' });
    const post = (op: string, body: unknown, t?: string) =>
      request(`${gateUrl}/v1/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(t ? { authorization: `Bearer ${t}` } : {}) },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json()) as { error: string } }));
    expect((await post('decide', { run: run.runDir })).status).toBe(401);
    expect((await post('decide', { run: run.runDir }, 'pgt_not-a-real-token-at-all')).status).toBe(401);
    expect((await post('release', { attestation: {}, to: 'webhook:http://127.0.0.1:1/x' })).status).toBe(401);
    expect((await post('override', { run: run.runDir, envelope: {} }, submitOnly)).status).toBe(403);
    expect(
      (await post('release', { attestation: {}, to: 'webhook:http://127.0.0.1:1/x' }, submitOnly)).status,
    ).toBe(403);
    // The CLI without a token: the refusal names the variable to set.
    const cli = spawnSync(
      process.execPath,
      ['bin/probate.js', 'gate', 'decide', run.runDir, '--gate', gateUrl],
      {
        encoding: 'utf8',
        env: env(),
      },
    );
    expect(cli.status).toBe(2);
    expect(cli.stderr).toMatch(/authentication required.*PROBATE_GATE_TOKEN/);
    // A policy in the body is not a parameter the gate takes; a path outside the runs root is never read.
    const withPolicy = await post('decide', { run: run.runDir, policy: '/etc/passwd' }, submitOnly);
    expect(withPolicy.status).toBe(422);
    expect(withPolicy.body.error).not.toMatch(/root:/);
    const outside = await post('decide', { run: '/etc' }, submitOnly);
    expect(outside.status).toBe(403);
    const escaped = await post('decide', { run: '../gate' }, submitOnly);
    expect(escaped.status).toBe(403);
    // Directory releases need an operator-configured release root.
    expect((await post('release', { attestation: {}, to: join(root, 'prod') }, token)).status).toBe(403);
    expect((await post('decide', { run: run.runDir }, submitOnly)).status).toBe(200);
  });

  it('refuses to listen off loopback without TLS or an explicit reverse proxy', () => {
    const r = spawnSync(
      process.execPath,
      ['bin/probate.js', 'gate', 'serve', '--gate', gateDir, '--runs-root', root, '--host', '0.0.0.0'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--host 0\.0\.0\.0: not a loopback address/);
  });

  it('the signing key never leaves the gate: not in replies, ledgers, attestations or logs', () => {
    const keyBody = readFileSync(join(gateDir, 'gate.key'), 'utf8').split('\n')[1]!;
    expect(keyBody.length).toBeGreaterThan(20);
    const files: string[] = [];
    const walk = (d: string) => {
      for (const f of readdirSync(d)) {
        const p = join(d, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (!p.endsWith('gate.key')) files.push(p);
      }
    };
    walk(root);
    expect(files.length).toBeGreaterThan(10);
    const raw = Buffer.from(keyBody, 'base64').subarray(-32);
    for (const f of files) {
      const content = readFileSync(f);
      expect(content.includes(keyBody), f).toBe(false);
      expect(content.includes(raw), f).toBe(false);
    }
    expect(gateOutput.includes(keyBody)).toBe(false);
  });
});
