import type { Exchange, ReplyRecord } from '../../src/contracts/exchange.ts';
import type { ChatRequest, Completion, ModelEndpoint, ModelIdentity } from '../../src/endpoints/types.ts';
import { EndpointError } from '../../src/endpoints/types.ts';

/** An in-process judge: `answer` sees the rendered judge request and returns the raw text (or throws). */
export function scriptedJudge(
  answer: (req: ChatRequest, call: number) => string,
  identity: Partial<ModelIdentity> = {},
): ModelEndpoint & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    ref: 'test:scripted',
    requests,
    identity: async () => ({
      ref: 'test:scripted',
      kind: 'vllm',
      modelId: 'scripted',
      maxModelLen: 512,
      ...identity,
    }),
    chat: async (req: ChatRequest): Promise<Completion[]> => {
      requests.push(req);
      const text = answer(req, requests.length);
      return [{ text, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 } }];
    },
    complete: async () => {
      throw new EndpointError('invalid_response', 'not used');
    },
    score: async () => [],
    close: async () => {},
  };
}

/** Reply A / Reply B as the judge was shown them. */
export function shownReplies(req: ChatRequest): { a: string; b: string } {
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  const a = /\nReply A: (.*)\nReply B: /s.exec(user)?.[1] ?? '';
  const b = /\nReply B: (.*)$/s.exec(user)?.[1] ?? '';
  return { a, b };
}

export function verdictJson(v: {
  verdict: 'flag' | 'clear' | 'uncertain';
  reply: 'A' | 'B' | 'none';
  severity?: string;
  citations?: string[];
  confidence?: number;
}): string {
  return JSON.stringify({
    verdict: v.verdict,
    reply: v.reply,
    severity: v.severity ?? (v.verdict === 'flag' ? 'high' : 'info'),
    confidence: v.confidence ?? 0.9,
    rationale: 'scripted',
    citations: v.citations ?? [],
  });
}

const ok = (text: string): ReplyRecord => ({ status: 'ok', text, attempts: 1, finishReason: 'stop' });

export function exchange(
  id: string,
  base: string,
  delivered: string,
  family: Exchange['family'] = 'triggers',
): Exchange {
  return {
    id: `set:${id}:clean:0`,
    family,
    probeSetId: 'set',
    probeSetHash: 'h',
    probeId: id,
    variant: 'clean',
    sample: 0,
    seed: 1,
    messages: [{ role: 'user', content: `Question ${id}?` }],
    meta: {},
    base: ok(base),
    delivered: ok(delivered),
    signals: {},
  };
}
