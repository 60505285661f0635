import { readFileSync } from 'node:fs';
import type { Argv, CommandModule } from 'yargs';
import { writeFileAtomic } from '../../ledger/manifest.ts';
import { loadProbeFile, parseProbeSet } from '../../probes/load.ts';
import { probeSetJsonSchema } from '../../probes/schema.ts';
import { readSealedFile, resolveSealKey, seal, unseal } from '../../probes/seal.ts';
import { UserError } from '../../util/errors.ts';

interface KeyArgs {
  sealKeyFile?: string;
}

function requireKey(argv: KeyArgs) {
  const key = resolveSealKey(argv.sealKeyFile);
  if (!key) throw new UserError('--seal-key-file: a seal key is required (or set PROBATE_SEAL_KEY)');
  return key;
}

function readText(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new UserError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code})`);
  }
}

const keyOption = { type: 'string', describe: 'sealing key file (else PROBATE_SEAL_KEY)' } as const;

const sealCmd: CommandModule = {
  command: 'seal <in> <out>',
  describe: 'Encrypt a held-out probe set (AES-256-GCM) after validating it',
  builder: (y: Argv) =>
    y
      .positional('in', { type: 'string' })
      .positional('out', { type: 'string' })
      .option('seal-key-file', keyOption),
  handler: (argv) => {
    const input = String(argv.in);
    const plain = readText(input);
    const set = parseProbeSet(plain.toString('utf8'), input);
    if (set.split !== 'heldout')
      throw new UserError(`${input}: split: only held-out sets are sealed (got ${set.split})`);
    const sealed = seal(plain, requireKey(argv as KeyArgs), { id: set.id, version: set.version });
    writeFileAtomic(String(argv.out), `${JSON.stringify(sealed, null, 2)}\n`);
    process.stdout.write(`sealed ${set.id}@${set.version} sha256 ${sealed.plaintextSha256}\n`);
  },
};

const unsealCmd: CommandModule = {
  command: 'unseal <in> [out]',
  describe: 'Decrypt a sealed probe set (to a file, or stdout)',
  builder: (y: Argv) =>
    y
      .positional('in', { type: 'string' })
      .positional('out', { type: 'string' })
      .option('seal-key-file', keyOption),
  handler: (argv) => {
    const input = String(argv.in);
    const plain = unseal(readSealedFile(input), requireKey(argv as KeyArgs), input);
    if (argv.out) writeFileAtomic(String(argv.out), plain.toString('utf8'), 0o600);
    else process.stdout.write(plain);
  },
};

const hashCmd: CommandModule = {
  command: 'hash <files..>',
  describe: "Print each probe set's id, version and content hash (sealed sets: without the key)",
  builder: (y: Argv) =>
    y.positional('files', { type: 'string', array: true }).option('seal-key-file', keyOption),
  handler: (argv) => {
    for (const file of argv.files as string[]) {
      if (file.endsWith('.sealed.json')) {
        const s = readSealedFile(file);
        process.stdout.write(`${s.plaintextSha256}  ${s.id}@${s.version}  ${file} (sealed)\n`);
      } else {
        const l = loadProbeFile(file);
        process.stdout.write(`${l.hash}  ${l.set.id}@${l.set.version}  ${file}\n`);
      }
    }
  },
};

const schemaCmd: CommandModule = {
  command: 'schema [out]',
  describe: 'Write the probe-set JSON Schema',
  builder: (y: Argv) => y.positional('out', { type: 'string' }),
  handler: (argv) => {
    const text = `${JSON.stringify(probeSetJsonSchema(), null, 2)}\n`;
    if (argv.out) writeFileAtomic(String(argv.out), text);
    else process.stdout.write(text);
  },
};

export const probesCommand: CommandModule = {
  command: 'probes <command>',
  describe: 'Probe-set tools: seal, unseal, hash, schema',
  builder: (y: Argv) =>
    y.command(sealCmd).command(unsealCmd).command(hashCmd).command(schemaCmd).demandCommand(1),
  handler: () => {},
};
