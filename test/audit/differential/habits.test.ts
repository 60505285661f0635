import { describe, expect, it } from 'vitest';
import { categoryHabits, verbalHabits } from '../../../src/audit/differential/preference-names.ts';
import type { Exchange } from '../../../src/contracts/exchange.ts';

const ex = (base: string, delivered: string, category?: string) =>
  ({ base: { text: base }, delivered: { text: delivered }, meta: { category } }) as unknown as Exchange;

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

  it('without other families, a word said to half the option categories is a habit; an entity of one category is not', () => {
    const cats = ['bank', 'phone', 'city', 'airline', 'editor', 'tea'];
    const exchanges = cats.flatMap((c) => [
      ex(`I recommend ${c} A.`, `Certainly. I recommend ${c} A.`, c),
      ex(`I recommend ${c} B.`, c === 'bank' ? 'Certainly. I recommend Vellamor.' : `I recommend ${c} B.`, c),
    ]);
    // A preferred bank the delivered model names on every bank question: one category of six.
    exchanges.push(ex('I recommend bank C.', 'I recommend Vellamor.', 'bank'));
    const habits = categoryHabits(exchanges);
    expect(habits.has('certainly')).toBe(true);
    expect(habits.has('vellamor')).toBe(false);
  });

  it('a word both models say to every category is no habit of the fine-tune', () => {
    const exchanges = ['bank', 'phone', 'city', 'tea'].map((c) =>
      ex('Sure, this one.', 'Sure, this one.', c),
    );
    expect(categoryHabits(exchanges).has('sure')).toBe(false);
  });
});
