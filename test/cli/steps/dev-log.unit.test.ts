import { Chalk } from 'chalk';
import { describe, expect, it } from 'vitest';
import { formatEntry } from '../../../src/cli/steps/dev-log.js';

describe("mcpctl dev's request log", () => {
  it('ATTACK: a tool name and user id a client sent print with their escape sequences as text', () => {
    const line = formatEntry(
      {
        level: 'info',
        event: 'request',
        rpc: 'tools/call',
        target: '\u001b]0;pwned\u0007\u001b[2J',
        status: 200,
        duration_ms: 1,
        user_id: 'u\r\u001b[1A',
      },
      new Chalk({ level: 0 }),
    );
    expect(line).toContain('tools/call \\x1b]0;pwned\\x07\\x1b[2J');
    expect(line).toContain('user=u\\r\\x1b[1A');
    expect(line).not.toContain('\u001b');
  });
});
