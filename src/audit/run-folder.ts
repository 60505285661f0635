import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { readRunState } from '../ledger/run-state.ts';
import { UserError } from '../util/errors.ts';

export const LEDGER_FILE = 'ledger.sqlite';

/** Pseudo file systems where a run folder cannot live (recursive mkdir there can even spin). */
const PSEUDO_FS = ['/proc', '/sys', '/dev'];

/**
 * Checks a run folder before any model is opened: a new folder must be creatable, an existing one must not
 * already hold a run (unless resuming), and `--resume` needs a run to resume. Creates nothing.
 */
export function checkRunFolder(dir: string, opts: { resume: boolean; flag?: string }): void {
  const flag = opts.flag ?? '--out';
  if (!existsSync(dir)) {
    if (opts.resume) throw new UserError(`--resume: ${dir} does not exist; expected a run folder to resume`);
    creatableAncestor(dir, flag);
    return;
  }
  if (!statSync(dir).isDirectory())
    throw new UserError(`${flag} ${dir}: a file is there; expected a folder (new, or a run to --resume)`);
  writable(dir, flag, dir);
  const ledger = join(dir, LEDGER_FILE);
  if (!existsSync(ledger)) {
    if (opts.resume) throw new UserError(`--resume: ${dir} holds no run (no ${LEDGER_FILE})`);
    return;
  }
  const state = readRunState(ledger);
  if (opts.resume && state.state === 'no-run')
    throw new UserError(`--resume: ${dir} holds no run (its ledger has no run.start)`);
  if (!opts.resume) throw new UserError(`${ledger} already holds a run: use --resume or another --out`);
}

function creatableAncestor(dir: string, flag: string): void {
  let up = resolve(dir);
  while (!existsSync(up)) up = dirname(up);
  const real = realpathSync(up);
  if (PSEUDO_FS.some((p) => real === p || real.startsWith(`${p}/`)))
    throw new UserError(`${flag} ${dir}: ${real} is a system pseudo-file-system; expected a normal folder`);
  if (!statSync(real).isDirectory())
    throw new UserError(`${flag} ${dir}: ${up} is a file; expected a folder path`);
  writable(real, flag, dir);
}

function writable(path: string, flag: string, dir: string): void {
  try {
    accessSync(path, constants.W_OK);
  } catch (err) {
    throw new UserError(
      `${flag} ${dir}: cannot write in ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/** A run folder as created by this run: what to remove if the run fails before it starts. */
export interface CreatedRunFolder {
  dir: string;
  /** Folders this call created, outermost first. */
  created: string[];
  /** Whether the ledger file was already there (a resumed run): never removed. */
  ledgerExisted: boolean;
}

/** Creates the run folder one level at a time (a recursive mkdir under /proc spins), naming failures. */
export function createRunFolder(dir: string): CreatedRunFolder {
  const missing: string[] = [];
  for (let up = resolve(dir); !existsSync(up); up = dirname(up)) missing.unshift(up);
  const folder: CreatedRunFolder = { dir, created: [], ledgerExisted: existsSync(join(dir, LEDGER_FILE)) };
  for (const level of missing) {
    try {
      mkdirSync(level);
      folder.created.push(level);
    } catch (err) {
      removeRunFolder(folder);
      throw new UserError(
        `run folder ${dir}: cannot create ${level} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  if (!statSync(dir).isDirectory())
    throw new UserError(`run folder ${dir}: a file is there; expected a folder`);
  return folder;
}

/** Removes what createRunFolder made and a ledger this run created: nothing half-written stays behind. */
export function removeRunFolder(folder: CreatedRunFolder): void {
  if (!folder.ledgerExisted)
    for (const suffix of ['', '-wal', '-shm', '-journal'])
      rmSync(join(folder.dir, `${LEDGER_FILE}${suffix}`), { force: true });
  for (const level of [...folder.created].reverse()) {
    try {
      rmdirSync(level); // only if empty: anything else in it was not ours
    } catch {
      break;
    }
  }
}
