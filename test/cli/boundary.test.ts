import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/cli/boundary.ts';
import { HttpEndpointError } from '../../src/endpoints/http/errors.ts';
import { UserError } from '../../src/util/errors.ts';

describe('the error boundary', () => {
  it('an unforeseen error is one line without --debug, and its stack with it', () => {
    const err = new TypeError('cannot read properties of undefined\n  (reading x)');
    const quiet = describeFailure(err, false);
    expect(quiet).toEqual({
      text: 'probate: internal error: cannot read properties of undefined; (reading x) (run with --debug for the stack)\n',
      exitCode: 1,
    });
    const loud = describeFailure(err, true);
    expect(loud.text).toMatch(/^probate: internal error: TypeError: cannot read properties[\s\S]*\n\s+at /);
  });

  it('a user error keeps its exit code and becomes one line', () => {
    expect(describeFailure(new UserError('a.yaml: x: bad\nmore'), false)).toEqual({
      text: 'probate: a.yaml: x: bad; more\n',
      exitCode: 2,
    });
  });

  it('an endpoint failure exits 1 and says what was expected', () => {
    const r = describeFailure(new HttpEndpointError('http', 'HTTP 401: Unauthorized', { status: 401 }), true);
    expect(r).toEqual({
      text: 'probate: HTTP 401: Unauthorized: expected credentials: name the variable holding the API key with --api-key-env\n',
      exitCode: 1,
    });
  });

  it('a file-system error names its path and what failed', () => {
    const e = Object.assign(new Error("ENOTDIR: not a directory, mkdir 'x/y'"), {
      code: 'ENOTDIR',
      path: 'x/y',
      syscall: 'mkdir',
    });
    expect(describeFailure(e, false)).toEqual({
      text: 'probate: x/y: cannot mkdir (ENOTDIR)\n',
      exitCode: 2,
    });
  });
});
