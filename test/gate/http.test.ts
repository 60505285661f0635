import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGate } from '../../src/gate/client.ts';
import { initGate } from '../../src/gate/init.ts';
import { loadPolicy } from '../../src/gate/policy.ts';
import { writeRun } from './fixtures.ts';

/** A release receiver that applies each idempotency key once, then (optionally) drops the reply. */
function webhook(dropReply: () => boolean, apply: () => boolean = () => true) {
  const applied = new Map<string, unknown>();
  let promotions = 0;
  const server = createServer((req, res) => {
    const key = String(req.headers['idempotency-key'] ?? '');
    if (req.method === 'GET') {
      res.writeHead(applied.has(key) ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ applied: applied.has(key) }));
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
      if (dropReply()) req.socket.destroy();
      else res.writeHead(200).end('{}');
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

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'gate-http-'));
  gateDir = join(root, 'gate');
  initGate(gateDir);
  gateProc = spawn(process.execPath, ['bin/probate.js', 'gate', 'serve', '--gate', gateDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

describe('gate over HTTP (probate gate serve on loopback)', () => {
  it('decide via the CLI with --gate URL: exit 0 and an attestation; critical finding exits 20 without one', () => {
    const ok = writeRun(join(root, 'ok'), { policyHash: policyHash(), lineage: 'ok' });
    const r = spawnSync(
      process.execPath,
      ['bin/probate.js', 'gate', 'decide', ok.runDir, '--gate', gateUrl, '--json'],
      { encoding: 'utf8' },
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).state).toBe('COMMITTABLE');
    expect(readdirSync(ok.runDir)).toContain('attestation.dsse.json');
    const bad = writeRun(join(root, 'bad'), {
      policyHash: policyHash(),
      lineage: 'bad',
      findings: [{ id: 'injection:canary:1', family: 'injection', severity: 'critical' }],
    });
    const b = spawnSync(
      process.execPath,
      ['bin/probate.js', 'gate', 'decide', bad.runDir, '--gate', gateUrl],
      { encoding: 'utf8' },
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
    const run = writeRun(join(root, 'hook'), { policyHash: policyHash(), lineage: 'hook' });
    const gate = openGate(gateUrl);
    const d = await gate.decide(run.runDir);
    expect(d.state).toBe('COMMITTABLE');

    const first = await gate.release(d.attestation, target, 2000);
    expect(first.state).toBe('UNCERTAIN');
    expect(hook.promotions()).toBe(1);

    drop = false;
    await expect(gate.release(d.attestation, target, 2000)).rejects.toThrow(/capability already reserved/);
    await expect(gate.decide(run.runDir)).rejects.toThrow(/UNCERTAIN/);
    expect(hook.promotions()).toBe(1);

    const settled = await gate.reconcile(run.runDir);
    expect(settled.state).toBe('RELEASED');
    await expect(gate.release(d.attestation, target, 2000)).rejects.toThrow(/capability already consumed/);
    expect(hook.promotions()).toBe(1);
    hook.server.close();
  });

  it('refused connection: nothing promoted; dropped before applying: reconcile releases the reservation', async () => {
    const run = writeRun(join(root, 'never'), { policyHash: policyHash(), lineage: 'never' });
    const gate = openGate(gateUrl);
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
