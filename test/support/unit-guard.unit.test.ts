/**
 * The unit tier's guard (unit-guard.ts, this tier's set-up file) stops a test that listens,
 * connects or starts a process.
 */
import { execFile, spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { takeAttempts } from './unit-guard.js';

describe('the unit guard', () => {
  it('refuses to listen', () => {
    expect(() => createServer().listen(0, '127.0.0.1')).toThrow(/may not listen on a socket/);
    expect(takeAttempts()).toHaveLength(1);
  });

  it('refuses to connect, by net, by http and by fetch', async () => {
    expect(() => connect({ host: '127.0.0.1', port: 9 })).toThrow(/may not open a connection/);
    expect(() => request('http://127.0.0.1:9/').end()).toThrow(/may not open a connection/);
    await expect(fetch('http://127.0.0.1:4321/')).rejects.toThrow();
    expect(takeAttempts()).toHaveLength(3);
  });

  it('refuses to start a process, also through the ESM named imports', () => {
    expect(() => spawn(process.execPath, ['-e', ''])).toThrow(/may not start a process/);
    expect(() => execFile(process.execPath, ['-e', ''])).toThrow(/may not start a process/);
    expect(takeAttempts()).toHaveLength(2);
  });

  it('a test that tries and swallows the error still fails', () => {
    try {
      createServer().listen(0);
    } catch {
      // swallowed on purpose
    }
    const seen = takeAttempts();
    // what the guard's afterEach would have found
    expect(seen).toHaveLength(1);
  });
});
