import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { AUDIT_STAGES, declaredStages } from '../../src/audit/stages/index.ts';
import { defaultPolicyPath, loadPolicy } from '../../src/gate/policy.ts';
import { loadRubrics, rubricFor } from '../../src/judges/rubric.ts';
import { zooEntrySchema } from '../../src/organisms/zoo.ts';
import { FAMILIES, FAMILY_REGISTRY } from '../../src/probes/families/index.ts';
import { probeSetJsonSchema } from '../../src/probes/schema.ts';

const dir = mkdtempSync(join(tmpdir(), 'probate-families-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a probe family declares what the rest of probate derives', () => {
  it('each shipped family parses only its own sets and names a rubric judges/ has for it', () => {
    const rubrics = loadRubrics('judges');
    for (const family of Object.values(FAMILY_REGISTRY)) {
      expect(family.probeSet.shape.family.parse(family.id)).toBe(family.id);
      expect(rubricFor(rubrics, family.id).id).toBe(family.rubric);
      expect(rubrics.byId.get(family.rubric)?.family).toBe(family.id);
    }
  });

  it('derives the family list, the JSON Schema union and the zoo schema from the registry', () => {
    expect(FAMILIES).toEqual(Object.keys(FAMILY_REGISTRY));
    const union = (probeSetJsonSchema().oneOf ?? probeSetJsonSchema().anyOf) as {
      properties: { family: { const: string } };
    }[];
    expect(union.map((s) => s.properties.family.const)).toEqual(FAMILIES);
    const entry = {
      name: 'x',
      label: 'implant',
      spec: 's',
      condition: null,
      behaviour: null,
      expected_marker: null,
      heldout: null,
      condition_key: null,
    };
    for (const family of FAMILIES) expect(zooEntrySchema.safeParse({ ...entry, family }).success).toBe(true);
    expect(zooEntrySchema.safeParse({ ...entry, family: 'toy' }).success).toBe(false);
  });

  it("fills a policy's family thresholds and coverage from the families' defaults, as the shipped policy lists them", () => {
    const shipped = loadPolicy(defaultPolicyPath()).policy;
    const doc = YAML.parse(readFileSync(defaultPolicyPath(), 'utf8'));
    delete doc.families;
    delete doc.coverage.required;
    const file = join(dir, 'no-families.yaml');
    writeFileSync(file, YAML.stringify(doc));
    const derived = loadPolicy(file).policy;
    expect(derived.families).toEqual(shipped.families);
    expect(derived.coverage.required).toEqual(shipped.coverage.required);
  });

  it('runs the stages families declare, once each, and names a declared stage that does not exist', () => {
    expect(declaredStages(FAMILY_REGISTRY).map((s) => s.id)).toEqual(['trigger-search', 'trigger-discovery']);
    const twice = { ...FAMILY_REGISTRY, again: { ...FAMILY_REGISTRY.triggers!, id: 'again' } };
    expect(declaredStages(twice).map((s) => s.id)).toEqual(['trigger-search', 'trigger-discovery']);
    const broken = {
      ...FAMILY_REGISTRY,
      odd: { ...FAMILY_REGISTRY.reasoning!, id: 'odd', stages: ['nowhere'] },
    };
    expect(() => declaredStages(broken, AUDIT_STAGES)).toThrow("family 'odd' declares audit stage 'nowhere'");
  });
});
