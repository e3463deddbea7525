/**
 * Long lines break at words with their continuation under the text, on a terminal only: pipes, logs
 * and CI keep every message on one line.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output } from '../../../src/cli/output.js';
import { visibleLength, wrapText } from '../../../src/cli/render/wrap.js';

describe('wrapText', () => {
  it('breaks at spaces, never inside a word, and hangs under the text after a mark or a label', () => {
    expect(wrapText('✖ the definition has a problem that needs fixing', 20)).toBe(
      '✖ the definition has\n  a problem that\n  needs fixing',
    );
    expect(wrapText('error: the engine is not running here', 23)).toBe('error: the engine is\n       not running here');
    expect(wrapText('  hint: run mcpctl engine start first', 25)).toBe(
      '  hint: run mcpctl engine\n        start first',
    );
  });

  it('keeps a word longer than the width whole, on a line of its own', () => {
    const url = 'http://127.0.0.1:4100/d/weather.production/mcp';
    expect(wrapText(`→ connect an MCP client to ${url} now`, 30)).toBe(`→ connect an MCP client to\n  ${url}\n  now`);
    expect(wrapText(url, 10)).toBe(url);
    expect(wrapText('→ stop it with `mcpctl engine stop --all` first', 24)).toBe(
      '→ stop it with\n  `mcpctl engine stop --all`\n  first',
    );
  });

  it('leaves short lines, each line of several, and text without a width as they are', () => {
    expect(wrapText('short', 20)).toBe('short');
    expect(wrapText('one line\nand another', 8)).toBe('one line\nand\nanother');
    const long = 'a sentence far longer than any terminal is wide '.repeat(5).trim();
    expect(wrapText(long, undefined)).toBe(long);
    expect(wrapText(long, 0)).toBe(long);
  });

  it('counts visible characters only: colour sequences take no room', () => {
    const red = (text: string) => `\u001b[31m${text}\u001b[39m`;
    const wrapped = wrapText(`${red('error:')} the engine is not running here`, 23);
    expect(wrapped).toBe(`${red('error:')} the engine is\n       not running here`);
    for (const line of wrapped.split('\n')) expect(visibleLength(line)).toBeLessThanOrEqual(23);
  });

  it('takes the indentation it is given, and drops it where it would leave no room', () => {
    expect(wrapText('  file:1:2  tools.x  the value is not a number', 25, 4)).toBe(
      '  file:1:2  tools.x  the\n    value is not a number',
    );
    expect(wrapText('→ a b c d e f g h i j k l m', 10, 8)).toBe('→ a b c d\ne f g h i\nj k l m');
  });
});

/** A stream as a terminal of `columns` (or a pipe), and what was written to it. */
function stream(columns: number, isTTY = true) {
  const s = Object.assign(new PassThrough(), { isTTY, columns });
  let text = '';
  s.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { s, text: () => text };
}

describe('Output on a narrow terminal', () => {
  const message = 'the deployment notes.production was not found on the engine at http://127.0.0.1:4100';
  const hint = 'list what runs with mcpctl ls, or deploy it with mcpctl deploy server.yaml --env production';

  it('wraps errors, hints, notices and a human result at words', () => {
    const stdout = stream(40);
    const stderr = stream(40);
    const out = new Output({ stdout: stdout.s, stderr: stderr.s, json: false, quiet: false, color: false, ci: false });
    out.error(message, { hint, problems: [{ path: 'deploy.env', message: 'must be one of production, staging' }] });
    out.notice('↻ reloaded server.yaml: 3 tools, 1 resource and 2 prompts, all of them checked');
    out.result({}, (p) => {
      p.success('Deployed notes to production in 12 s, replacing deploy_abc of notes');
      p.fields([['mcp endpoint', 'http://127.0.0.1:4100/d/notes.production/mcp']]);
      p.next('mcpctl logs notes.production --level warn --grep timeout');
      p.line('a table row is laid out already and is never wrapped by the output module');
    });
    expect(stderr.text()).toBe(
      [
        'error: the deployment notes.production',
        '       was not found on the engine at',
        '       http://127.0.0.1:4100',
        '  deploy.env  must be one of production,',
        '    staging',
        '→ list what runs with mcpctl ls, or',
        '  deploy it with mcpctl deploy',
        '  server.yaml --env production',
        '↻ reloaded server.yaml: 3 tools, 1',
        '  resource and 2 prompts, all of them',
        '  checked',
        '',
      ].join('\n'),
    );
    expect(stdout.text()).toBe(
      [
        '✔ Deployed notes to production in 12 s,',
        '  replacing deploy_abc of notes',
        '  mcp endpoint  http://127.0.0.1:4100/d/notes.production/mcp',
        // a command to paste stays whole
        '→ mcpctl logs notes.production --level warn --grep timeout',
        'a table row is laid out already and is never wrapped by the output module',
        '',
      ].join('\n'),
    );
  });

  it('keeps every message on one line in a pipe and in CI', () => {
    for (const [isTTY, ci] of [
      [false, false],
      [true, true],
    ] as const) {
      const stderr = stream(40, isTTY);
      const out = new Output({
        stdout: stream(40, isTTY).s,
        stderr: stderr.s,
        json: false,
        quiet: false,
        color: false,
        ci,
      });
      out.error(message, { hint });
      expect(stderr.text()).toBe(`error: ${message}\n→ ${hint}\n`);
    }
  });
});
