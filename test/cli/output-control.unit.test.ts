/* eslint-disable no-control-regex -- these tests look for control characters */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { explainApiError } from '../../src/cli/api-errors.js';
import { Output } from '../../src/cli/output.js';
import { ApiError } from '../../src/api/errors.js';
import type { UserError } from '../../src/shared/errors.js';

/** An Output on in-memory streams that claim to be a colour terminal. */
function terminal() {
  const text = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') => {
    const s = new PassThrough() as PassThrough & { isTTY?: boolean };
    s.isTTY = true;
    s.on('data', (chunk: Buffer) => (text[name] += chunk.toString('utf8')));
    return s;
  };
  const out = new Output({
    stdout: stream('stdout'),
    stderr: stream('stderr'),
    json: false,
    quiet: false,
    color: true,
    ci: true,
  });
  return { out, text };
}

describe('control characters in what the CLI prints', () => {
  it('ATTACK: an API error whose message and fields carry escape sequences prints them as text, in our colours', () => {
    const error = new ApiError({
      kind: 'http',
      status: 400,
      code: 'validation_failed',
      message: 'bad name \u001b]0;pwned\u0007',
      requestId: 'req_\u001b[2J',
      details: [{ path: 'tools[0].name\u001b[8m', message: 'not \u001b[2Jallowed' }],
    });
    const explained = explainApiError(error) as UserError;
    const { out, text } = terminal();
    out.error(explained.message, {
      problems: explained.problems,
      ...(explained.requestId === undefined ? {} : { requestId: explained.requestId }),
    });
    expect(text.stderr).toContain('bad name \\x1b]0;pwned\\x07');
    expect(text.stderr).toContain('not \\x1b[2Jallowed');
    expect(text.stderr).toContain('tools[0].name\\x1b[8m');
    expect(text.stderr).toContain('req_\\x1b[2J');
    // every escape sequence left is a colour of the CLI's own
    expect(text.stderr.replace(/\u001b\[[0-9;]*m/g, '')).not.toContain('\u001b');
    expect(text.stderr).toContain('\u001b[31m');
  });

  it('ATTACK: raw text, warnings, tables and progress lines show a service escape sequence as text', async () => {
    const { out, text } = terminal();
    out.raw('line \u001b[2J\n');
    out.warn('deploy notice \u001b]8;;http://evil\u0007click\u001b]8;;\u0007');
    out.result({}, (p) => p.table(['NAME'], [['x\u001b[1A\u001b[2K']]));
    const progress = await out.progress('deploying \u001b[2J');
    progress.succeed('done \u0007');
    const all = `${text.stdout}${text.stderr}`;
    expect(all).toContain('line \\x1b[2J');
    expect(all).toContain('\\x1b]8;;http://evil\\x07click');
    expect(all).toContain('x\\x1b[1A\\x1b[2K');
    expect(all).toContain('deploying \\x1b[2J');
    expect(all.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(/[\u0007\u001b]/);
  });

  it('--json output escapes every control character, C1 and DEL included, and stays the same JSON', () => {
    const stdout = new PassThrough();
    let written = '';
    stdout.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
    const out = new Output({ stdout, stderr: new PassThrough(), json: true, quiet: false, color: false, ci: true });
    out.writeJson({ name: '\u001b[2J\u009b2J\u007f' });
    expect(written).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(JSON.parse(written)).toEqual({ name: '\u001b[2J\u009b2J\u007f' });
  });
});
