import { type JudgeRecord, SEVERITIES, type Severity } from '../contracts/exchange.ts';
import { type ChatMessage, EndpointError, type ModelEndpoint } from '../endpoints/types.ts';
import { judgeMessages, type PromptBudget, verdictSchema, verdictTokenBudget } from './prompt.ts';
import type { Rubric } from './rubric.ts';
import { parseVerdict, type RawVerdict } from './verdict.ts';

/** Who the judge is and how it is asked; built once per run. */
export interface JudgeContext {
  endpoint: ModelEndpoint;
  /** The judge's reference with secrets removed (identity().ref). */
  judgeRef: string;
  budget: PromptBudget;
  /** Attempts per order: the first greedy, the rest sampled (temperature 0.7, distinct seeds). */
  maxAttempts: number;
  seed: number;
  /**
   * When the second order is asked. `always` measures both orders (calibration needs each order's answer);
   * `if_decisive` asks it only after the first order gave a valid flag or clear, because a first order that
   * is malformed, cited nothing real or answered uncertain already makes the pair uncertain whatever the
   * second says. Every flag or clear still rests on both orders.
   */
  secondOrder: 'always' | 'if_decisive';
}

export interface PairInput {
  messages: ChatMessage[];
  base: string;
  delivered: string;
}

export type UncertainReason =
  | 'order_disagreement'
  | 'malformed'
  | 'invalid_citation'
  | 'failed'
  | 'judge_uncertain';

/** Which model a single-order verdict points at, once A/B is mapped back. */
export type Flagged = 'none' | 'base' | 'delivered';

export type OrderResult =
  | {
      order: 'base_first' | 'delivered_first';
      calls: number;
      ok: true;
      verdict: RawVerdict;
      flagged: Flagged;
    }
  | {
      order: 'base_first' | 'delivered_first';
      calls: number;
      ok: false;
      reason: UncertainReason;
      detail: string;
    };

/** A JudgeRecord plus the evidence behind it (rationale, checked citations, each order's outcome). */
export interface JudgeOutcome extends JudgeRecord {
  uncertainReason?: UncertainReason;
  rationale?: string;
  citations?: string[];
  orders: OrderResult[];
}

async function askOneOrder(
  ctx: JudgeContext,
  rubric: Rubric,
  pair: PairInput,
  order: 'base_first' | 'delivered_first',
): Promise<OrderResult> {
  const [a, b] = order === 'base_first' ? [pair.base, pair.delivered] : [pair.delivered, pair.base];
  const messages = judgeMessages(rubric, pair.messages, a, b, ctx.budget);
  let last: { reason: UncertainReason; detail: string } = { reason: 'malformed', detail: 'no attempt' };
  let calls = 0;
  for (let attempt = 0; attempt < ctx.maxAttempts; attempt++) {
    calls++;
    let text: string;
    try {
      const [completion] = await ctx.endpoint.chat({
        messages,
        params: {
          maxTokens: verdictTokenBudget(messages, ctx.budget),
          temperature: attempt === 0 ? 0 : 0.7,
          seed: ctx.seed + attempt,
        },
        structuredOutput: verdictSchema(ctx.budget),
      });
      text = completion?.text ?? '';
    } catch (err) {
      // The endpoint has already retried transient failures; a judge that cannot answer is uncertain.
      if (err instanceof EndpointError)
        return { order, calls, ok: false, reason: 'failed', detail: err.message };
      throw err;
    }
    const parsed = parseVerdict(text, a, b);
    if (parsed.ok) {
      const v = parsed.verdict;
      const flagged: Flagged =
        v.verdict !== 'flag' ? 'none' : (v.reply === 'A') === (order === 'base_first') ? 'base' : 'delivered';
      return { order, calls, ok: true, verdict: v, flagged };
    }
    last = { reason: parsed.reason, detail: parsed.detail };
  }
  return { order, calls, ok: false, ...last };
}

const maxSeverity = (xs: Severity[]): Severity =>
  xs.reduce<Severity>((m, s) => (SEVERITIES.indexOf(s) > SEVERITIES.indexOf(m) ? s : m), 'info');

/** Combines the two orders: they must agree on which model (if any) shows the behaviour. */
export function combineOrders(
  orders: OrderResult[],
  base: { cached: boolean; judgeRef: string; rubricHash: string },
): JudgeOutcome {
  const calls = orders.reduce((n, o) => n + o.calls, 0);
  const common = { ...base, calls, orders };
  const claimed = maxSeverity(
    orders.flatMap((o) => (o.ok && o.flagged === 'delivered' ? [o.verdict.severity] : [])),
  );
  const failed = orders.find((o) => !o.ok);
  if (failed && !failed.ok) {
    return {
      ...common,
      verdict: 'uncertain',
      severity: claimed,
      confidence: 0,
      uncertainReason: failed.reason,
    };
  }
  const ok = orders.filter((o): o is Extract<OrderResult, { ok: true }> => o.ok);
  if (ok.some((o) => o.verdict.verdict === 'uncertain')) {
    return {
      ...common,
      verdict: 'uncertain',
      severity: claimed,
      confidence: 0,
      uncertainReason: 'judge_uncertain',
    };
  }
  if (new Set(ok.map((o) => o.flagged)).size > 1) {
    return {
      ...common,
      verdict: 'uncertain',
      severity: claimed,
      confidence: 0,
      uncertainReason: 'order_disagreement',
    };
  }
  // Invariant: a flag or clear rests on both orders; judgePair never combines a single decisive order.
  if (ok.length < 2) throw new Error('combineOrders: a decisive verdict needs both orders');
  const confidence = Math.min(...ok.map((o) => o.verdict.confidence));
  const rationale = ok[0]?.verdict.rationale;
  if (ok[0]?.flagged === 'delivered') {
    const citations = [...new Set(ok.flatMap((o) => o.verdict.citations))];
    return { ...common, verdict: 'flag', severity: claimed, confidence, rationale, citations };
  }
  return { ...common, verdict: 'clear', severity: 'info', confidence, rationale, citations: [] };
}

/** Judges one (probe, base reply, delivered reply) in both orders (see `JudgeContext.secondOrder`). */
export async function judgePair(ctx: JudgeContext, rubric: Rubric, pair: PairInput): Promise<JudgeOutcome> {
  const base = { cached: false, judgeRef: ctx.judgeRef, rubricHash: rubric.hash };
  if (ctx.secondOrder === 'always') {
    const orders = await Promise.all([
      askOneOrder(ctx, rubric, pair, 'base_first'),
      askOneOrder(ctx, rubric, pair, 'delivered_first'),
    ]);
    return combineOrders(orders, base);
  }
  const first = await askOneOrder(ctx, rubric, pair, 'base_first');
  if (!first.ok || first.verdict.verdict === 'uncertain') return combineOrders([first], base);
  return combineOrders([first, await askOneOrder(ctx, rubric, pair, 'delivered_first')], base);
}
