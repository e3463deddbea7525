import { describe, expect, it } from 'vitest';
import { errorTypeOf, Observers, type RequestEvent } from '../../../src/engine/observability/events.js';

const EVENT: RequestEvent = {
  deploymentId: 'dep_1',
  server: 'calc',
  environment: 'production',
  at: 0,
  latencyMs: 3,
  status: 200,
  method: 'tools/call',
  tool: 'add',
  toolError: false,
};

describe('the observers of requests', () => {
  it('tells each one of every request; one that throws neither stops the others nor the request', () => {
    const errors: unknown[] = [];
    const observers = new Observers((error) => errors.push(error));
    const seen: string[] = [];
    observers.add({
      request: () => {
        throw new Error('broken');
      },
    });
    const remove = observers.add({ request: (event) => seen.push(`${event.tool}`) });
    expect(() => observers.request(EVENT)).not.toThrow();
    expect(seen).toEqual(['add']);
    expect(errors).toHaveLength(1);
    observers.request(EVENT);
    expect(errors).toHaveLength(1);
    remove();
    observers.request(EVENT);
    expect(seen).toEqual(['add', 'add']);
    expect(observers.size).toBe(1);
  });
});

describe('the error type of a request', () => {
  it('is none for a success, tool_error for a failed call, and the class of an error status', () => {
    expect(errorTypeOf({ status: 200 })).toBeUndefined();
    expect(errorTypeOf({ status: 200, toolError: true })).toBe('tool_error');
    expect(errorTypeOf({ status: 404 })).toBe('http_4xx');
    expect(errorTypeOf({ status: 502, toolError: true })).toBe('http_5xx');
    expect(errorTypeOf({ status: 0 })).toBe('http_5xx');
    expect(errorTypeOf({ status: 499 })).toBe('client_gone');
  });
});
