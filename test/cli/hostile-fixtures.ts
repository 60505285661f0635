import { cpSync, mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Ledger } from '../../src/ledger/ledger.ts';

const PROBES =
  'id: r\nversion: 1\nsplit: dev\nfamily: reasoning\nsampling: { samples: 1, temperature: 0, maxTokens: 16 }\nprobes:\n  - { id: a, user: "What is 2 + 2?" }\n  - { id: b, user: "What is 3 + 4?" }\n';

const sparse = (file: string, bytes: number) => {
  writeFileSync(file, '');
  truncateSync(file, bytes);
};

function ledgerWith(dir: string, records: Array<[Parameters<Ledger['append']>[0], unknown]>): void {
  mkdirSync(dir, { recursive: true });
  const ledger = Ledger.open(join(dir, 'ledger.sqlite'));
  for (const [kind, payload] of records) ledger.append(kind, payload as never);
  ledger.close();
}

const START = { manifest: { schema: 'probate.manifest/v1', runId: 't' }, config: {} };
const ATTEMPT = {
  endpoint: 'vllm:x#m',
  attempt: 1,
  startedAt: 0,
  durationMs: 1,
  ok: false,
  requestHash: 'h',
};

/** Builds every file the hostile table refers to under `t`. */
export function writeHostileFixtures(t: string): void {
  writeFileSync(join(t, 'p.yaml'), PROBES);
  mkdirSync(join(t, 'probes'));
  writeFileSync(join(t, 'probes/dup.yaml'), PROBES);
  writeFileSync(join(t, 'probes/notyaml.yaml'), 'id: [unclosed\n  : :');
  writeFileSync(join(t, 'probes/empty.yaml'), '');
  writeFileSync(join(t, 'probes/family.yaml'), PROBES.replace('family: reasoning', 'family: astrology'));
  writeFileSync(join(t, 'probes/noprobes.yaml'), PROBES.split('probes:')[0]!);
  writeFileSync(join(t, 'probes/version.yaml'), PROBES.replace('version: 1', 'version: one'));
  writeFileSync(join(t, 'probes/garbage.sealed.json'), '{{{ not json');
  sparse(join(t, 'probes/huge.yaml'), 9 * 1024 * 1024);
  sparse(join(t, 'probes/huge.sealed.json'), 9 * 1024 * 1024);
  writeFileSync(join(t, 'wrong.key'), `${'ab'.repeat(32)}\n`);
  writeFileSync(join(t, 'policy-bad.yaml'), 'version: [\n');
  writeFileSync(join(t, 'policy-schema.yaml'), 'version: "1"\nseverity: { critical: allow }\n');
  sparse(join(t, 'policy-huge.yaml'), 2 * 1024 * 1024);
  cpSync('fixtures/judge-labels/benign.json', join(t, 'labels.json'));
  sparse(join(t, 'labels-huge.json'), 17 * 1024 * 1024);
  mkdirSync(join(t, 'empty'));

  // Local model folders, each broken in one way.
  const model = (name: string, edit: (dir: string) => void) => {
    const dir = join(t, name);
    cpSync('fixtures/organisms/base', dir, { recursive: true });
    edit(dir);
  };
  const editJson = (file: string, f: (o: Record<string, unknown>) => void) => {
    const o = JSON.parse(readFileSync(file, 'utf8'));
    f(o);
    writeFileSync(file, JSON.stringify(o));
  };
  model('m-type5', (d) => editJson(join(d, 'config.json'), (o) => (o.model_type = 5)));
  model('m-novocab', (d) => editJson(join(d, 'config.json'), (o) => delete o.vocab_size));
  model('m-badjson', (d) => writeFileSync(join(d, 'config.json'), '{"model_type": '));
  model('m-noconfig', (d) => rmSync(join(d, 'config.json')));
  model('m-notemplate', (d) => editJson(join(d, 'tokenizer_config.json'), (o) => delete o.chat_template));
  model('m-noonnx', (d) => rmSync(join(d, 'onnx/model.onnx')));

  // Ledgers and run folders.
  mkdirSync(join(t, 'zero'));
  writeFileSync(join(t, 'zero/ledger.sqlite'), '');
  mkdirSync(join(t, 'random'));
  writeFileSync(
    join(t, 'random/ledger.sqlite'),
    Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919) % 251)),
  );
  mkdirSync(join(t, 'foreign'));
  const foreign = new Database(join(t, 'foreign/ledger.sqlite'));
  foreign.exec('CREATE TABLE t (x)');
  foreign.close();
  mkdirSync(join(t, 'emptydb'));
  const emptydb = new Database(join(t, 'emptydb/ledger.sqlite'));
  emptydb.pragma('user_version = 1');
  emptydb.close();
  mkdirSync(join(t, 'dirledger/ledger.sqlite'), { recursive: true });
  ledgerWith(join(t, 'attempts-only'), [['attempts', { attempts: [ATTEMPT] }]]);
  ledgerWith(join(t, 'unfinished'), [['run.start', START]]);
  ledgerWith(join(t, 'aborted'), [
    ['run.start', START],
    ['run.end', { exchanges: 0, failed: 0, findings: 0, status: 'aborted', reason: '--delivered went away' }],
  ]);
  const complete: Array<[Parameters<Ledger['append']>[0], unknown]> = [
    ['run.start', START],
    ['run.end', { exchanges: 0, failed: 0, findings: 0 }],
  ];
  ledgerWith(join(t, 'complete'), complete);
  ledgerWith(join(t, 'badmanifest'), complete);
  writeFileSync(join(t, 'badmanifest/manifest.json'), '{');
}

/** A loopback URL nobody listens on (a port that was free a moment ago). */
export async function closedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}/v1`;
}
