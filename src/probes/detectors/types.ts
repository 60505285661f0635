import { z } from 'zod';
import type { Exchange, SignalValue } from '../../contracts/exchange.ts';

/** What detection may look at besides the exchange itself: earlier exchanges of the same group. */
export interface DetectContext {
  /** The group's clean exchange for the same probe and sample, when this one is a variant. */
  clean?: Exchange;
}

export type Side = 'base' | 'delivered';
export const SIDES = ['base', 'delivered'] as const;

/** The signals a detector may write: a zod object of signal name → value schema (every one optional). */
export type SignalShape = Record<string, z.ZodOptional<z.ZodType<SignalValue>>>;

/**
 * A detector: a named, pure unit that reads one finished exchange and writes typed signals. Families list
 * the detectors they use (`FamilyDef.detectors`); one detector may serve several families. Signal names are
 * what the ledger and the reports read, so a detector's names never change meaning.
 */
export interface DetectorDef<S extends SignalShape = SignalShape> {
  id: string;
  /** Every signal it may write, and the type of its value. */
  signals: z.ZodObject<S>;
  detect(ex: Exchange, ctx: DetectContext): z.infer<z.ZodObject<S>>;
}

/** `name.base` and `name.delivered`, both optional (a side that failed writes none). */
export function perSide<N extends string, T extends z.ZodType<SignalValue>>(
  name: N,
  value: T,
): Record<`${N}.${Side}`, z.ZodOptional<T>> {
  return { [`${name}.base`]: value.optional(), [`${name}.delivered`]: value.optional() } as Record<
    `${N}.${Side}`,
    z.ZodOptional<T>
  >;
}

/** The signals of one exchange: each detector's, in the order the family lists them. */
export function detectSignals(
  detectors: readonly DetectorDef[],
  ex: Exchange,
  ctx: DetectContext,
): Record<string, SignalValue> {
  const out: Record<string, SignalValue> = {};
  for (const d of detectors) Object.assign(out, d.detect(ex, ctx));
  return out;
}

/** The detectors' signals as one strict schema: what a family's exchanges may carry (tests check with it). */
export function signalsSchema(detectors: readonly DetectorDef[]) {
  return z.strictObject(Object.assign({}, ...detectors.map((d) => d.signals.shape)) as SignalShape);
}
