/**
 * Set-up file of the `unit` tier: a unit test neither opens a socket nor starts a process. Every
 * way to listen, to connect or to spawn throws at once and is remembered, and the test that tried
 * it fails afterwards even if something on the way swallowed the error. A test that needs one of
 * these belongs in the `integration` tier (or `e2e` when it runs the built CLI).
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { afterEach, beforeEach, expect } from 'vitest';

const STATE = Symbol.for('mcpctl.unit-guard');
const global = globalThis as { [STATE]?: { attempts: string[]; patched: boolean } };
const state = (global[STATE] ??= { attempts: [], patched: false });

/** What the current test tried so far, forgotten: for the guard's own test. */
export function takeAttempts(): string[] {
  return state.attempts.splice(0);
}

function forbid(what: string): never {
  const message = `a unit test may not ${what}: make it an integration test (*.integration.test.ts)`;
  state.attempts.push(message);
  throw new Error(message);
}

// Once a process: the functions are patched for every test file that runs in it.
if (!state.patched) {
  state.patched = true;
  const listen = function listen(): never {
    return forbid('listen on a socket (net.Server.listen)');
  };
  const connect = function connect(): never {
    return forbid('open a connection (net.Socket.connect)');
  };
  net.Server.prototype.listen = listen;
  net.Socket.prototype.connect = connect;
  const mutable = childProcess as unknown as Record<string, unknown>;
  for (const name of ['spawn', 'spawnSync', 'fork', 'exec', 'execSync', 'execFile', 'execFileSync'] as const) {
    mutable[name] = () => forbid(`start a process (child_process.${name})`);
  }
  // ESM imports of node:child_process see the patched functions too.
  syncBuiltinESMExports();
}

beforeEach(() => {
  takeAttempts();
});

afterEach(() => {
  expect(takeAttempts(), 'the test tried to leave the process').toEqual([]);
});
