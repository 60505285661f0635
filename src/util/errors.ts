/** Exit codes shared by every command (README "Exit codes"). */
export const ExitCode = {
  COMMITTABLE: 0,
  OK: 0,
  INTERNAL: 1,
  /** An endpoint that cannot be reached or answers something unusable. */
  ENDPOINT: 1,
  USAGE: 2,
  REVIEW_REQUIRED: 10,
  BLOCKED: 20,
} as const;

/**
 * An error the user can fix (bad file, bad flag, missing dependency). The CLI prints its message as one
 * line, without a stack, and exits with `exitCode` (2 unless said otherwise).
 */
export class UserError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = ExitCode.USAGE) {
    super(message);
    this.name = 'UserError';
    this.exitCode = exitCode;
  }
}

/** Formats a zod error as `FILE: field.path: expected ...` on one line. */
export function describeZodIssue(
  where: string,
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
): string {
  const first = issues[0];
  if (!first) return `${where}: invalid`;
  const path = first.path.length ? first.path.map(String).join('.') : '(root)';
  return `${where}: ${path}: ${first.message}`;
}
