// Child process for the kill -9 test: appends exchanges (each with its attempt) in a loop, skipping
// exchange ids already recorded (as `--resume` does), and prints each committed id.
import { Ledger } from '../../src/ledger/ledger.ts';
import { attemptPayload, exchangePayload } from './payloads.ts';

const [file, total] = [process.argv[2]!, Number(process.argv[3])];
const ledger = Ledger.open(file);
const done = ledger.exchangeIds();
for (let i = 0; i < total; i++) {
  const id = `x${i}`;
  if (done.has(id)) continue;
  ledger.queueAttempt(attemptPayload(1));
  ledger.appendMany([{ kind: 'exchange', payload: exchangePayload(id, 'y'.repeat(2000)) }]);
  process.stdout.write(`${id}\n`);
}
ledger.close();
