import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parseServeModel } from '../../../src/cli/commands/serve.ts';
import { MODEL_DIR } from '../local/model.ts';

/** Runs the real CLI: `node bin/probate.js serve ...`. */
function serve(args: string[]) {
  const child = spawn(process.execPath, ['bin/probate.js', 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return { child, stderr: () => stderr };
}

describe('probate serve (the CLI)', () => {
  it('prints exactly "listening http://HOST:PORT" on a free port, serves, and stops on SIGTERM', async () => {
    const { child, stderr } = serve([`local:${MODEL_DIR}=base`, '--port', '0', '--threads', '1']);
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr()}`)));
    });
    expect(first).toMatch(/^listening http:\/\/127\.0\.0\.1:\d+$/);
    const url = first.slice('listening '.length);
    expect(Number(new URL(url).port)).toBeGreaterThan(0);
    const health = await request(`${url}/health`);
    await health.body.dump();
    expect(health.statusCode).toBe(200);
    const models = (await (await request(`${url}/v1/models`)).body.json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(['base']);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('refuses a malformed folder with one line naming it and exit 2', async () => {
    const { child, stderr } = serve(['local:/nonexistent/model', '--port', '0']);
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr().trim()).toBe('probate: /nonexistent/model: not a model folder');
  });

  it('parses local:DIR[=NAME] and rejects other references', () => {
    expect(parseServeModel('local:fixtures/organisms/base=delivered')).toEqual({
      dir: 'fixtures/organisms/base',
      name: 'delivered',
    });
    expect(parseServeModel('local:some/dir')).toEqual({ dir: 'some/dir', name: undefined });
    expect(() => parseServeModel('vllm:http://x#m')).toThrow(
      'serve: vllm:http://x#m: expected local:DIR[=NAME]',
    );
    expect(() => parseServeModel('local:dir=')).toThrow(/name after =/);
  });
});
