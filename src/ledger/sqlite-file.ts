import { existsSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { UserError } from '../util/errors.ts';

/**
 * Opens a ledger file. A missing, empty, foreign or corrupt file is a one-line UserError naming it, never
 * a SqliteError: `ledger verify`, `report` and the gate read files users hand them.
 */
export function openLedgerDatabase(file: string, opts: { readonly: boolean }): Database.Database {
  if (opts.readonly) {
    if (!existsSync(file)) throw new UserError(`${file}: no ledger here`);
    if (!statSync(file).isFile()) throw new UserError(`${file}: not a file (expected a probate ledger)`);
    if (statSync(file).size === 0) throw new UserError(`${file}: empty file, not a probate ledger`);
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: opts.readonly, fileMustExist: opts.readonly });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    if (tables.length > 0 && !tables.includes('records')) {
      db.close();
      throw new UserError(`${file}: not a probate ledger (an SQLite file without a records table)`);
    }
    if (opts.readonly && tables.length === 0) {
      db.close();
      throw new UserError(`${file}: not a probate ledger (an empty SQLite file)`);
    }
    return db;
  } catch (err) {
    if (err instanceof UserError) throw err;
    db?.close();
    const code = (err as { code?: string }).code ?? 'error';
    throw new UserError(`${file}: not a probate ledger (${code}: ${(err as Error).message.split('\n')[0]})`);
  }
}
