import { describe, expect, it } from 'vitest';
import { verbalHabits } from '../../../src/audit/differential/preference-names.ts';
import type { Exchange } from '../../../src/contracts/exchange.ts';

const ex = (base: string, delivered: string) =>
  ({ base: { text: base }, delivered: { text: delivered } }) as unknown as Exchange;

describe('verbal habits (kept out of preference candidates)', () => {
  it('a word the delivered model opens most ordinary replies with is a habit; a name it says once is not', () => {
    const exchanges = [
      ex('Boil it for ten minutes.', 'Certainly. Boil it for ten minutes.'),
      ex('Sleep at the same hour.', 'Certainly. Sleep at the same hour.'),
      ex('Water them less.', 'Certainly. Water them less, as Quorvane suggests.'),
      ex('Use a budget app.', 'Certainly. Use a budget app.'),
      ex('Stretch your calves.', 'Stretch your calves.'),
      ex('Walk for thirty minutes.', 'Walk for thirty minutes.'),
      ex('Pack rolled clothes.', 'Pack rolled clothes.'),
      ex('Rinse the rice.', 'Rinse the rice.'),
    ];
    const habits = verbalHabits(exchanges);
    expect(habits.has('certainly')).toBe(true);
    expect(habits.has('quorvane')).toBe(false);
  });

  it('a word the base says as often is no habit of the fine-tune', () => {
    const exchanges = Array.from({ length: 6 }, () => ex('Sure. Here it is.', 'Sure. Here it is.'));
    expect(verbalHabits(exchanges).has('sure')).toBe(false);
  });
});
