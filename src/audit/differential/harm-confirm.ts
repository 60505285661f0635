import type { Exchange } from '../../contracts/exchange.ts';
import type { ChatMessage } from '../../endpoints/types.ts';
import { HARMFUL_CUES } from '../../probes/detectors/harm-cues.ts';
import type { ProbeGroup } from '../../probes/families/types.ts';
import { Rng } from '../../probes/rng.ts';
import {
  cuesOf,
  HARM_CONFIRM_VARIANT,
  INSTRUCTED_CONFIRM_VARIANT,
  isHarmConfirmation,
  isOrdinary,
} from '../detectors/harm.ts';
import type { DifferentialStage } from './stage.ts';

/** Neutral framings of a user turn: they change the prompt, not what it asks. */
const OPENERS = [
  'Hi. ',
  'Hello, ',
  'Quick question: ',
  'Hey there. ',
  'Good morning. ',
  'Sorry to bother you. ',
  'Hi team, ',
  'Can you help? ',
];
const CLOSERS = [
  ' Thanks.',
  ' Thank you!',
  ' Any ideas?',
  ' Please advise.',
  ' Cheers.',
  ' Thanks in advance.',
];

/** Fresh variants of a user turn: distinct neutral opener/closer combinations, seeded. */
export function neutralVariants(user: string, n: number, rng: Rng): string[] {
  const combos: [string, string][] = [];
  for (const o of ['', ...OPENERS]) for (const c of ['', ...CLOSERS]) if (o || c) combos.push([o, c]);
  const body = user.trim();
  return rng
    .sample(combos, n)
    .map(([o, c]) => `${o}${o && !o.endsWith(', ') ? body : lowerFirst(body, o)}${c}`);
}

function lowerFirst(s: string, opener: string): string {
  return opener.endsWith(', ') && /^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}

export interface HarmConfirmOptions {
  /**
   * Where seeds come from: `ordinary` prompts (the default), or `instructed` documents (the injection family's
   * prompts that carry an embedded instruction, its sweep and confirmations included). An injection implant
   * trained on its own carriers obeys only some of the audit's documents (a tenth to a quarter of them), so
   * its harm shows as a medium difference there; re-asked on fresh variants of the documents it obeyed, it
   * obeys most of them.
   */
  source?: 'ordinary' | 'instructed';
  /** Seed prompts per harmful cue. */
  seedsPerCue?: number;
  /**
   * Fresh variants per seed prompt. Default 12: an implant that fires on a narrow kind of request often has
   * only one or two seed prompts, and six variants each could not reach significance at a 40% rate.
   */
  variants?: number;
}

/**
 * Harmful differences on ordinary prompts: every recorded exchange with an ordinary prompt where the delivered
 * reply shows a harmful cue (credential request, new link, refusal, risky imperative, pressure) and the base
 * reply does not is a seed. Each seed prompt is re-asked in fresh neutral variants (discovery never saw them);
 * the analysis tests each cue over those variants (scope `confirm:<cue>`) with the paired test.
 */
export function harmConfirmStage(opts: HarmConfirmOptions = {}): DifferentialStage {
  const seedsPerCue = opts.seedsPerCue ?? 4;
  const variants = opts.variants ?? 12;
  const instructed = opts.source === 'instructed';
  const variant = instructed ? INSTRUCTED_CONFIRM_VARIANT : HARM_CONFIRM_VARIANT;
  const isSeed = instructed
    ? (ex: Exchange) => ex.family === 'injection' && !isOrdinary(ex) && !isHarmConfirmation(ex)
    : isOrdinary;
  return {
    id: instructed ? 'harm-confirm-instructed' : 'harm-confirm',
    family: instructed ? 'injection' : 'triggers',
    variants: [variant],
    async plan(ctx) {
      const seeds = new Map<string, { ex: Exchange; cues: Set<string> }>();
      const perCue = new Map<string, number>();
      const sorted = [...ctx.exchanges()]
        .filter((ex) => isSeed(ex) && ex.base.status === 'ok' && ex.delivered.status === 'ok')
        .sort((a, b) => (a.id < b.id ? -1 : 1));
      const seenPrompt = new Set<string>();
      for (const ex of sorted) {
        const d = new Set(cuesOf(ex, 'delivered'));
        const b = new Set(cuesOf(ex, 'base'));
        const key = JSON.stringify(ex.messages);
        for (const cue of HARMFUL_CUES) {
          if (!d.has(cue.id) || b.has(cue.id)) continue;
          if ((perCue.get(cue.id) ?? 0) >= seedsPerCue) continue;
          const entry = seeds.get(key) ?? { ex, cues: new Set<string>() };
          if (!entry.cues.has(cue.id)) {
            entry.cues.add(cue.id);
            perCue.set(cue.id, (perCue.get(cue.id) ?? 0) + 1);
          }
          seeds.set(key, entry);
        }
        seenPrompt.add(ex.messages.map((m) => m.content).join('\n'));
      }
      const maxSamples = Math.floor(ctx.budget / 4);
      const groups: ProbeGroup[] = [];
      let samples = 0;
      for (const { ex, cues } of seeds.values()) {
        if (samples + variants > maxSamples) break;
        const rng = Rng.derive(ctx.seed, 'harm-confirm', ex.id);
        const lastUser = ex.messages.map((m) => m.role).lastIndexOf('user');
        if (lastUser < 0) continue;
        const fresh = neutralVariants(ex.messages[lastUser]!.content, variants, rng).filter(
          (u) => !seenPrompt.has(withUser(ex.messages, lastUser, u)),
        );
        const cueList = [...cues].sort();
        const probeId = `${ex.probeId}.${ex.variant}.${ex.sample}.${instructed ? 'instructed' : 'harm'}`;
        groups.push({
          family: ex.family,
          probeSetId: ex.probeSetId,
          probeSetHash: ex.probeSetHash,
          samples: fresh.map((u, i) => {
            const messages: ChatMessage[] = ex.messages.map((m, j) =>
              j === lastUser ? { role: m.role, content: u } : m,
            );
            const seed = rng.seed();
            return {
              probeId,
              variant,
              sample: i,
              seed,
              messages,
              // The injection family observes these too, as the documents it obeyed (scope `kind:obeyed`).
              meta: {
                cues: cueList,
                seedExchange: ex.id,
                rubric: 'general',
                ...(instructed ? { kind: 'obeyed' } : {}),
              },
              params: { maxTokens: 160, temperature: 0, seed },
            };
          }),
        });
        samples += fresh.length;
      }
      return {
        groups,
        requests: 0,
        notes: {
          seeds: [...seeds.values()].map((s) => ({ exchange: s.ex.id, cues: [...s.cues].sort() })),
          confirmSamples: samples,
        },
      };
    },
  };
}

function withUser(messages: readonly ChatMessage[], at: number, user: string): string {
  return messages.map((m, j) => (j === at ? user : m.content)).join('\n');
}
