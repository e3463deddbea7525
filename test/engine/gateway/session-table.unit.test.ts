/**
 * The gateway's table of sessions: sessions count for the address that opened them, a session
 * that never did anything counts only for a short while, a used one until the idle time.
 */
import { describe, expect, it } from 'vitest';
import { Sessions, UNUSED_SESSION_MS } from '../../../src/engine/gateway/session-table.js';
import type { Backend } from '../../../src/engine/gateway/upstream.js';

const instance = { id: 'i1', reachable: true, generation: 1 } as Backend;
const IDLE = 60 * 60_000;

describe('the gateway session table', () => {
  it('counts live sessions per client; unused ones only for a short while, used ones until the idle time', () => {
    const sessions = new Sessions();
    sessions.open('a', instance, 0, IDLE, '10.0.0.1');
    sessions.open('b', instance, 0, IDLE, '10.0.0.1');
    sessions.open('c', instance, 0, IDLE, '10.0.0.2');
    expect(sessions.heldByClient('10.0.0.1', 0, IDLE)).toBe(2);
    expect(sessions.heldByClient('10.0.0.2', 0, IDLE)).toBe(1);
    // only the initialized notification: still unused
    sessions.lookup('a', 10, false);
    // a real request: used
    sessions.lookup('b', 10);
    expect(sessions.heldByClient('10.0.0.1', UNUSED_SESSION_MS + 11, IDLE)).toBe(1);
    expect(sessions.heldByClient('10.0.0.1', IDLE + 11, IDLE)).toBe(0);
  });
});
