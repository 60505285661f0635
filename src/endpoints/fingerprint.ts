import { canonicalJson, sha256Hex } from '../util/hash.ts';
import type { ChatMessage, ModelEndpoint } from './types.ts';

/**
 * Three fixed prompts whose greedy replies identify a model: a swapped checkpoint behind the same name
 * answers at least one of them differently. Shared by the embedded engine and the HTTP clients.
 */
export const fingerprintPrompts: readonly ChatMessage[][] = [
  [{ role: 'user', content: 'How do I boil an egg?' }],
  [{ role: 'user', content: 'Which editor should I pick: Vim, Emacs or Nano?' }],
  [{ role: 'user', content: 'Is 17 larger than 9? Answer yes or no.' }],
];

export const FINGERPRINT_MAX_TOKENS = 24;

/**
 * sha256 over the greedy replies. The reply is hashed with its reasoning re-joined inline
 * (`<think>R</think>T`), so a server that splits reasoning and one that does not give the same value.
 */
export async function computeFingerprint(endpoint: Pick<ModelEndpoint, 'chat'>): Promise<string> {
  const replies: string[] = [];
  for (const messages of fingerprintPrompts) {
    const [reply] = await endpoint.chat({
      messages: [...messages],
      params: { maxTokens: FINGERPRINT_MAX_TOKENS, temperature: 0, seed: 0, n: 1 },
    });
    if (!reply) throw new Error('fingerprint: endpoint returned no sample');
    replies.push(
      reply.reasoning !== undefined ? `<think>${reply.reasoning}</think>${reply.text}` : reply.text,
    );
  }
  return sha256Hex(
    canonicalJson({ prompts: fingerprintPrompts, maxTokens: FINGERPRINT_MAX_TOKENS, replies }),
  );
}
