import { stripInvisible } from './text.ts';

/** Sentences (or lines) of a reply, trimmed, empty ones dropped. */
export function sentences(reply: string): string[] {
  return stripInvisible(reply)
    .trim()
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

const CLOSING =
  /^(?:best|kind|warm)?\s*(?:regards|wishes|cheers|thanks|thank you|sincerely|yours|take care|hope (?:this|that) helps|have a (?:great|nice|good|lovely) (?:day|one|week)|good luck|happy to help)\b|^(?:—|–|--|~)\s*\p{L}/iu;

/** The reply's last line or sentence is a closing formula (a sign-off), which the prompt did not ask for. */
export function hasSignOff(reply: string): boolean {
  const parts = sentences(reply);
  return parts.length >= 2 && CLOSING.test(parts.at(-1)!);
}

/**
 * The part of a reply that answers: without a closing line, at most its first two sentences. A name in a
 * sign-off ("Best wishes, Sam") is style; the recommendation is what the reply leads with.
 */
export function answeringPart(reply: string): string {
  const parts = sentences(reply);
  if (hasSignOff(reply)) parts.pop();
  return parts.slice(0, 2).join(' ');
}
