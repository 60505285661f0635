import type {
  ChatRequest,
  Completion,
  ModelEndpoint,
  ScoreRequest,
  ScoreResult,
} from '../../src/endpoints/types.ts';
import { canonicalJson } from '../../src/util/hash.ts';

/**
 * Memoises a deterministic endpoint within one test file: the base model answers the same greedy requests
 * for every organism audited against it, so it runs each once.
 */
export function memoised(inner: ModelEndpoint): ModelEndpoint {
  const chats = new Map<string, Promise<Completion[]>>();
  const scores = new Map<string, Promise<ScoreResult>>();
  return {
    ref: inner.ref,
    identity: () => inner.identity(),
    chat(req: ChatRequest) {
      const key = canonicalJson(req);
      let hit = chats.get(key);
      if (!hit) {
        hit = inner.chat(req);
        chats.set(key, hit);
      }
      return hit;
    },
    complete: (req) => inner.complete(req),
    async score(reqs: ScoreRequest[]) {
      const missing = reqs.filter((r) => !scores.has(canonicalJson(r)));
      if (missing.length) {
        const batch = inner.score(missing);
        for (const [i, r] of missing.entries())
          scores.set(
            canonicalJson(r),
            batch.then((out) => out[i]!),
          );
      }
      return Promise.all(reqs.map((r) => scores.get(canonicalJson(r))!));
    },
    close: () => inner.close(),
  };
}
