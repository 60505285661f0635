import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds each long slow-suite file took in the fresh-clone CI of 50f1017 (2 cores, two workers). A clean
 * clone has no vitest timing cache, so the default order (largest file first) started the zoo audits, the
 * longest file by far, after others and left one worker idle for a quarter of an hour at the end. Longest
 * first (LPT scheduling) keeps both workers busy; unknown files keep the default order after these.
 */
const MEASURED_S: Record<string, number> = {
  'test/audit/zoo.slow.test.ts': 1605,
  'test/audit/serve-parity.slow.test.ts': 420,
  'test/audit/discovery.slow.test.ts': 339,
  'test/gate/attacks/blocked.slow.test.ts': 338,
  'test/gate/attacks/committable.slow.test.ts': 242,
  'test/organisms/implants.slow.test.ts': 143,
  'test/judges/fixture.slow.test.ts': 58,
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const cost = (f: TestSpecification) => MEASURED_S[relative(f.project.config.root, f.moduleId)] ?? 0;
    return ordered
      .map((file, index) => ({ file, index }))
      .sort((a, b) => cost(b.file) - cost(a.file) || a.index - b.index)
      .map(({ file }) => file);
  }
}
