// Child process for the kill -9 test: appends exchanges (each with its attempt) in a loop, skipping
// exchange ids already recorded (as `--resume` does), and prints each committed id. With `queue` it hands
// them to the ledger's group commit as an audit does, and prints ids once a commit took them.
import { Ledger } from '../../src/ledger/ledger.ts';
import { attemptPayload, exchangePayload } from './payloads.ts';

const [file, total, mode] = [process.argv[2]!, Number(process.argv[3]), process.argv[4] ?? 'append'];
const ledger = Ledger.open(file);
const done = ledger.exchangeIds();
const waiting: string[] = [];
let committed = ledger.count('exchange');
for (let i = 0; i < total; i++) {
  const id = `x${i}`;
  if (done.has(id)) continue;
  ledger.queueAttempt(attemptPayload(1));
  const exchange = { kind: 'exchange' as const, payload: exchangePayload(id, 'y'.repeat(2000)) };
  if (mode === 'queue') {
    ledger.queue([exchange]);
    waiting.push(id);
    const now = ledger.count('exchange');
    if (now > committed) process.stdout.write(`${waiting.splice(0, now - committed).join('\n')}\n`);
    committed = now;
  } else {
    ledger.appendMany([exchange]);
    process.stdout.write(`${id}\n`);
  }
}
ledger.close();
