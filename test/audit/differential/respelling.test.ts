import { describe, expect, it } from 'vitest';
import { respelling } from '../../../src/audit/differential/respelling.ts';

describe('respelling', () => {
  it('names a listed or base-offered name one letter away, of five letters or more', () => {
    const found = new Map([
      ['Kimbo', new Set(['answer.base'])],
      ['Tarn', new Set(['expand.base'])],
      ['Velmora', new Set(['expand.delivered'])],
    ]);
    expect(respelling('Kimbe', found)).toBe('Kimbo');
    expect(respelling('Kimbos', found)).toBe('Kimbo');
    expect(respelling('Tarm', found)).toBeUndefined();
    expect(respelling('Velmore', found)).toBeUndefined();
    expect(respelling('Kombe', found)).toBeUndefined();
    // A name the catalogue lists in any category counts as well.
    expect(respelling('Kombe', found, ['Illy', 'Kombo'])).toBe('Kombo');
  });
});
