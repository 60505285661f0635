import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import type { z } from 'zod';
import { exchangeSchema, type FamilyId, findingSchema } from '../contracts/exchange.ts';
import type { LedgerRecord } from '../contracts/records.ts';
import {
  judgePayloadSchema,
  runEndPayloadSchema,
  runStartPayloadSchema,
  scorePayloadSchema,
} from '../contracts/records.ts';
import { Ledger } from '../ledger/ledger.ts';
import { type Manifest, manifestHash, readManifest } from '../ledger/manifest.ts';
import { verifyLedger } from '../ledger/verify.ts';
import { FAMILIES } from '../probes/families/index.ts';
import { hashJson } from '../util/hash.ts';
import type { Evidence, FamilyEvidence, FindingEvidence } from './decide.ts';

export const LEDGER_FILE = 'ledger.sqlite';

// The record contracts (src/contracts/), narrowed to the typed fields the gate needs; anything else in a
// payload (model text) is ignored.
const ExchangeFacts = exchangeSchema.pick({ id: true, family: true, base: true, delivered: true });
const FindingFacts = findingSchema.pick({ id: true, family: true, severity: true });
const JudgeFacts = judgePayloadSchema.pick({ exchangeId: true, verdict: true });
const ScoreFacts = scorePayloadSchema.pick({ families: true });
const RunEndFacts = runEndPayloadSchema;
const RunStartFacts = runStartPayloadSchema.pick({ manifest: true });

export interface RunEvidence {
  manifest: Manifest;
  manifestHash: string;
  evidenceRoot: string;
  evidence: Evidence;
  /** Gate records (kind `override`) appended after the evidence root. */
  overridePayloads: unknown[];
}

/**
 * Reads a run's evidence for the gate: verifies the ledger against the manifest's evidence root, then
 * counts typed facts from records up to that root. Records that do not parse are integrity problems.
 */
export function collectEvidence(
  runDir: string,
  opts: { policyHash: string; overridden?: ReadonlyArray<string>; gatePub?: KeyObject },
): RunEvidence {
  const manifest = readManifest(runDir);
  const ledgerFile = join(runDir, LEDGER_FILE);
  const check = verifyLedger(ledgerFile, {
    evidenceRoot: manifest.evidenceRoot,
    manifestHash: manifestHash(manifest),
    gatePub: opts.gatePub,
  });
  const integrity: string[] = [];
  const inconsistencies: string[] = [];
  if (!check.ok) integrity.push(`ledger: ${check.error?.reason}`);
  const lastSeq = check.ok ? (check.rootSeq ?? check.head.seq) : (check.error?.seq ?? 1) - 1;

  // The shipped families are always listed (a required one with no evidence is a gap); a plugin family's
  // records are counted under it rather than dropped.
  const families = new Map<FamilyId, FamilyEvidence>();
  const familyOf = (f: FamilyId): FamilyEvidence => {
    let fe = families.get(f);
    if (!fe) {
      fe = { family: f, ok: 0, failed: 0, judge: { flag: 0, clear: 0, uncertain: 0 } };
      families.set(f, fe);
    }
    return fe;
  };
  for (const f of FAMILIES) familyOf(f);
  const exchangeFamily = new Map<string, FamilyId>();
  const findings = new Map<string, FindingEvidence>();
  const judges: Array<z.infer<typeof JudgeFacts>> = [];
  const overridePayloads: unknown[] = [];
  let runEnd: z.infer<typeof RunEndFacts> | undefined;
  const runStarts: Array<Record<string, unknown>> = [];
  let scored = false;
  let exchanges = 0;
  let failed = 0;

  const facts = <T>(schema: z.ZodType<T>, r: LedgerRecord): T | undefined => {
    const parsed = schema.safeParse(r.payload);
    if (!parsed.success) integrity.push(`record ${r.seq} (${r.kind}) does not match its schema`);
    return parsed.success ? parsed.data : undefined;
  };

  const ledger = Ledger.open(ledgerFile, { readonly: true });
  try {
    for (const r of ledger.records()) {
      if (r.seq > lastSeq) {
        if (check.ok && r.kind === 'override') overridePayloads.push(r.payload);
        continue;
      }
      if (r.kind === 'run.start') {
        const start = facts(RunStartFacts, r);
        if (start) runStarts.push(start.manifest);
      } else if (r.kind === 'exchange') {
        const x = facts(ExchangeFacts, r);
        if (!x) continue;
        if (exchangeFamily.has(x.id)) inconsistencies.push(`exchange ${x.id} recorded twice`);
        exchangeFamily.set(x.id, x.family);
        exchanges += 1;
        const fe = familyOf(x.family);
        if (x.base.status === 'ok' && x.delivered.status === 'ok') fe.ok += 1;
        else {
          fe.failed += 1;
          failed += 1;
        }
      } else if (r.kind === 'finding') {
        const f = facts(FindingFacts, r);
        if (f) findings.set(f.id, f);
      } else if (r.kind === 'judge') {
        const j = facts(JudgeFacts, r);
        if (j) judges.push(j);
      } else if (r.kind === 'score') {
        const s = facts(ScoreFacts, r);
        if (!s) continue;
        scored = true;
        for (const f of s.families) {
          const fe = familyOf(f.family);
          fe.score = f.score;
          fe.planned = f.coverage.planned;
        }
      } else if (r.kind === 'run.end') runEnd = facts(RunEndFacts, r);
    }
  } finally {
    ledger.close();
  }

  let orphanJudgements = 0;
  for (const j of judges) {
    const family = exchangeFamily.get(j.exchangeId);
    if (family) familyOf(family).judge[j.verdict] += 1;
    else orphanJudgements += 1;
  }

  // The last run.start (a --resume writes another) must match manifest.json key by key; earlier ones must
  // agree on everything but their start time, or the evidence mixes two models or probe sets.
  const lastStart = runStarts.at(-1);
  if (!lastStart) integrity.push('no run.start record');
  else {
    for (const [key, value] of Object.entries(lastStart))
      if (hashJson(value) !== hashJson((manifest as Record<string, unknown>)[key]))
        integrity.push(`manifest.json field '${key}' differs from the run.start record`);
    for (const earlier of runStarts.slice(0, -1))
      for (const key of new Set([...Object.keys(earlier), ...Object.keys(lastStart)]))
        if (key !== 'createdAt' && hashJson(earlier[key]) !== hashJson(lastStart[key]))
          integrity.push(`resumed run changed manifest field '${key}'`);
  }
  const runEnded = runEnd !== undefined && manifest.evidenceRoot !== undefined;
  if (runEnd) {
    if (runEnd.exchanges !== exchanges)
      inconsistencies.push(`run.end counts ${runEnd.exchanges} exchanges, ledger has ${exchanges}`);
    if (runEnd.failed !== failed)
      inconsistencies.push(`run.end counts ${runEnd.failed} failed, ledger has ${failed}`);
    if (runEnd.findings !== findings.size)
      inconsistencies.push(`run.end counts ${runEnd.findings} findings, ledger has ${findings.size}`);
    if (!scored) inconsistencies.push('no score record');
  }

  const calibration = manifest.judge?.calibration;
  return {
    manifest,
    manifestHash: manifestHash(manifest),
    evidenceRoot: manifest.evidenceRoot ?? check.head.hash,
    overridePayloads,
    evidence: {
      integrity,
      runEnded,
      inconsistencies,
      auditPolicyHash: manifest.policy.hash,
      policyHash: opts.policyHash,
      judge: { present: Boolean(manifest.judge), calibrated: calibration?.calibrated === true },
      families: [...families.values()],
      findings: [...findings.values()],
      orphanJudgements,
      overridden: opts.overridden ?? [],
    },
  };
}
