/** GitHub Actions formats: workflow commands, step outputs, paths relative to the workspace. Pure. */
import { describe, expect, it } from 'vitest';
import { formatOutputs, parseWhere, workflowCommand, workspacePath } from '../../src/cli/github.js';
import { cell } from '../../src/cli/render/ci-summary.js';

describe('GitHub Actions formats', () => {
  it('escapes workflow command data and properties', () => {
    expect(
      workflowCommand('error', 'a: 50%\nnext line', { file: 'dir/a,b.yaml', line: 3, col: 7, title: 'mcpctl: test' }),
    ).toBe('::error file=dir/a%2Cb.yaml,line=3,col=7,title=mcpctl%3A test::a: 50%25%0Anext line');
    expect(workflowCommand('warning', 'plain')).toBe('::warning::plain');
  });

  it('reads file:line:column and file:line', () => {
    expect(parseWhere('defs/server.yaml:12:5')).toEqual({ file: 'defs/server.yaml', line: 12, col: 5 });
    expect(parseWhere('.env:3')).toEqual({ file: '.env', line: 3 });
    expect(parseWhere('tools[0].name')).toBeUndefined();
    expect(parseWhere(undefined)).toBeUndefined();
  });

  it('names files relative to the workspace when they are inside it', () => {
    expect(workspacePath('server.yaml', '/repo/app', '/repo')).toBe('app/server.yaml');
    expect(workspacePath('../other/x.yaml', '/repo', '/repo')).toBe('../other/x.yaml');
    expect(workspacePath('server.yaml', '/repo/app', undefined)).toBe('server.yaml');
  });

  it('writes outputs as name=value, and a value with a line break as a heredoc', () => {
    expect(formatOutputs({ mcp_id: 'mcp_1', url: undefined, status: 'ready' })).toBe('mcp_id=mcp_1\nstatus=ready\n');
    expect(formatOutputs({ note: 'a\nb' }, 'EOF_X')).toBe('note<<EOF_X\na\nb\nEOF_X\n');
  });

  it('keeps a Markdown table cell on one line with its pipes escaped', () => {
    expect(cell('a | b\nc')).toBe('a \\| b c');
  });
});
