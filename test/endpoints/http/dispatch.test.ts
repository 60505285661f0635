import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { dispatchWhole } from '../../../src/endpoints/http/dispatch.ts';
import { Cancel } from '../../../src/endpoints/http/hedge.ts';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A server whose handler is the test's; it counts requests and closed sockets. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen = { requests: 0, closedSockets: 0 };
  const server: Server = createServer((req, res) => {
    seen.requests++;
    handler(req, res);
  });
  server.on('connection', (s) => s.on('close', () => seen.closedSockets++));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
  closers.push(
    () => pool.destroy().catch(() => {}),
    () => new Promise((r) => server.close(r)),
    async () => server.closeAllConnections(),
  );
  return { pool, seen };
}

const get = { path: '/x', method: 'GET' as const, headers: {} };
const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

describe('dispatchWhole: a reply gathered whole on undici dispatch()', () => {
  it('returns status, headers and the whole body across chunks', async () => {
    const { pool } = await serve((_req, res) => {
      res.writeHead(503, { 'retry-after': '2' });
      res.write('{"a":');
      setTimeout(() => res.end('"€"}'), 5);
    });
    const r = await dispatchWhole(pool, get, 1000, new Cancel());
    expect(r.statusCode).toBe(503);
    expect(r.headers['retry-after']).toBe('2');
    expect(r.body.toString('utf8')).toBe('{"a":"€"}');
  });

  it('a request aborted while it waits for a connection is never sent', async () => {
    let release!: () => void;
    // The first request holds the only connection once the server has it (awaited, not a fixed wait: on a
    // loaded machine it may not have arrived yet).
    let held!: () => void;
    const holding = new Promise<void>((r) => {
      held = r;
    });
    const { pool, seen } = await serve((_req, res) => {
      release = () => res.end('first');
      held();
    });
    const first = dispatchWhole(pool, get, 1000, new Cancel());
    await holding;
    const cancel = new Cancel();
    const second = dispatchWhole(pool, get, 1000, cancel);
    cancel.abort();
    await expect(second).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    release();
    expect((await first).body.toString()).toBe('first');
    await tick();
    expect(seen.requests).toBe(1);
  });

  it('an abort mid-body closes the connection, so a stalled reply does not keep its socket', async () => {
    const { pool, seen } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":'); // and stalls
    });
    const cancel = new Cancel();
    const reply = dispatchWhole(pool, get, 1000, cancel);
    await tick(50);
    cancel.abort();
    await expect(reply).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    // The socket closes on the next turns; a loaded machine may take longer than a fixed wait.
    for (let waited = 0; seen.closedSockets === 0 && waited < 2000; waited += 10) await tick(10);
    expect(seen.closedSockets).toBe(1);
  });

  it('a body over the cap, announced or arriving, fails as truncated and closes the connection', async () => {
    const announced = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '5000' });
      res.write('x'.repeat(10));
    });
    await expect(dispatchWhole(announced.pool, get, 100, new Cancel())).rejects.toMatchObject({
      kind: 'truncated',
    });
    const chunked = await serve((_req, res) => {
      res.write('x'.repeat(80));
      setTimeout(() => res.write('x'.repeat(80)), 5);
    });
    await expect(dispatchWhole(chunked.pool, get, 100, new Cancel())).rejects.toMatchObject({
      kind: 'truncated',
      message: expect.stringContaining('more than 100 bytes arrived'),
    });
    await tick(50);
    expect(announced.seen.closedSockets + chunked.seen.closedSockets).toBe(2);
  });

  it('a connection cut mid-body rejects with the socket error', async () => {
    const { pool } = await serve((req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"a":');
      setTimeout(() => req.socket.destroy(), 5);
    });
    await expect(dispatchWhole(pool, get, 1000, new Cancel())).rejects.toMatchObject({
      code: expect.stringMatching(/^UND_ERR_SOCKET|ECONNRESET$/),
    });
  });
});
