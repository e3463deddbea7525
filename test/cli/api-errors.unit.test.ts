/**
 * How the client's errors read to a user: the right kind of object, the exit code that tells the
 * truth (input, configuration, transient, still in progress), and the next step.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { explainApiError } from '../../src/cli/api-errors.js';
import type { Connection } from '../../src/cli/config.js';
import { UserError } from '../../src/shared/errors.js';

const remote: Connection = {
  url: 'https://mcp.example.com',
  apiKey: 'secret',
  urlSource: 'from --api-url',
  keySource: 'from MCPCTL_API_KEY',
  profile: undefined,
  local: false,
};

function explain(error: ApiError, connection: Connection = remote): UserError {
  const explained = explainApiError(error, connection);
  expect(explained).toBeInstanceOf(UserError);
  return explained as UserError;
}

function stillRunning(operation: string, waitedMs?: number): ApiError {
  const error = new ApiError({
    kind: 'http',
    status: 409,
    code: 'conflict',
    message: 'a request with this Idempotency-Key is still running; retry later',
    retryAfter: 1,
    operation,
  });
  error.idempotencyKey = 'b9f0c1de-4b4c-4a51-9c1e-2f4f0f0e9a11';
  if (waitedMs !== undefined) error.waitedMs = waitedMs;
  return error;
}

describe('explainApiError', () => {
  it('a build still running when the wait ran out names the build and the key that picks up its result', () => {
    const error = explain(stillRunning('build', 600_000));
    expect(error.exitCode).toBe(8);
    expect(error.code).toBe('still_running');
    expect(error.message).toBe(
      'the build is still running on the service at https://mcp.example.com (from --api-url) after 10 min of waiting',
    );
    expect(error.hint).toContain('--idempotency-key b9f0c1de-4b4c-4a51-9c1e-2f4f0f0e9a11');
    expect(`${error.message} ${error.hint ?? ''}`).not.toMatch(/deployment/);
  });

  it('a deployment still running names the deployment', () => {
    const error = explain(stillRunning('deploy', 600_000));
    expect(error.message).toMatch(/^the deployment is still running/);
    expect(error.exitCode).toBe(8);
  });

  it('a state conflict of a build does not point at a deployment', () => {
    const error = explain(
      new ApiError({ kind: 'http', status: 409, code: 'conflict', message: 'busy', operation: 'build' }),
    );
    expect(error.exitCode).toBe(2);
    expect(error.hint).not.toMatch(/deployment/);
  });

  it('a state conflict of a deployment points at its status', () => {
    const error = explain(
      new ApiError({ kind: 'http', status: 409, code: 'conflict', message: 'is deploying', operation: 'rollback' }),
    );
    expect(error.exitCode).toBe(2);
    expect(error.hint).toContain('mcpctl status <deployment_id>');
  });

  it('no answer in time is transient and says how to wait longer', () => {
    const timeout = new ApiError({
      kind: 'network',
      code: 'timeout',
      message: 'no answer within 30 s',
      operation: 'list',
    });
    const error = explain(timeout);
    expect(error.exitCode).toBe(4);
    expect(error.message).toBe(
      'the service at https://mcp.example.com (from --api-url) did not answer in time: no answer within 30 s',
    );
    expect(error.hint).toContain('--request-timeout');
    expect(error.hint).toContain('MCPCTL_REQUEST_TIMEOUT');
  });

  it('a build that got no answer in time may still go on: the hint gives its key', () => {
    const timeout = new ApiError({
      kind: 'network',
      code: 'timeout',
      message: 'no answer within 30 s',
      operation: 'build',
    });
    timeout.idempotencyKey = 'ci-42';
    expect(explain(timeout).hint).toContain(
      'the build may still go on there: run the same command again with --idempotency-key ci-42',
    );
  });

  it('configuration, not input and not transient: a refused key, an answer outside the contract, a service without the operation', () => {
    expect(explain(new ApiError({ kind: 'http', status: 401, code: 'unauthorized', message: 'no' })).exitCode).toBe(3);
    expect(
      explain(
        new ApiError({
          kind: 'contract',
          status: 200,
          code: 'contract_violation',
          message: 'the answer does not follow the /v1 contract: data.url: required',
        }),
      ).exitCode,
    ).toBe(3);
    expect(
      explain(new ApiError({ kind: 'http', status: 501, code: 'not_implemented', message: 'no deployments here' }))
        .exitCode,
    ).toBe(3);
  });

  it('input: an unknown id, a rejected field, a conflict', () => {
    expect(
      explain(new ApiError({ kind: 'http', status: 404, code: 'not_found', message: 'no deployment deploy_x' }))
        .exitCode,
    ).toBe(2);
    expect(
      explain(new ApiError({ kind: 'http', status: 422, code: 'validation_failed', message: 'bad' })).exitCode,
    ).toBe(2);
  });

  it('transient: unreachable, rate-limited, failing', () => {
    expect(
      explain(new ApiError({ kind: 'network', code: 'unreachable', message: 'connection refused' })).exitCode,
    ).toBe(4);
    expect(
      explain(new ApiError({ kind: 'http', status: 429, code: 'rate_limited', message: 'slow down', retryAfter: 3 }))
        .exitCode,
    ).toBe(4);
    expect(
      explain(new ApiError({ kind: 'http', status: 503, code: 'unavailable', message: 'stopping' })).exitCode,
    ).toBe(4);
  });
});

describe('a write the engine’s disk refused', () => {
  const local: Connection = {
    ...remote,
    url: 'http://127.0.0.1:7070',
    urlSource: 'from the local engine',
    local: true,
  };
  const full = (): ApiError =>
    new ApiError({
      kind: 'http',
      status: 507,
      code: 'storage_full',
      message: 'the engine could not write /h/bundles/x/server.json: no space is left on its disk (ENOSPC)',
      operation: 'build',
    });

  it('is the engine’s problem (exit 4) with what to free, not the definition’s (exit 5)', () => {
    const error = explain(full(), local);
    expect(error.exitCode).toBe(4);
    expect(error.code).toBe('storage_full');
    expect(error.message).toContain('no space is left on its disk (ENOSPC)');
    expect(error.hint).toContain('`mcpctl rm`');
    expect(error.hint).toContain('deployment-logs');
    expect(`${error.message} ${error.hint ?? ''}`).not.toMatch(/definition|validate/);
  });

  it('on a remote service, asks whoever runs it; a read-only disk says what to fix', () => {
    expect(explain(full()).hint).toContain('ask whoever runs the service to free space');
    const readOnly = explain(
      new ApiError({ kind: 'http', status: 507, code: 'storage_unwritable', message: 'read-only (EROFS)' }),
      local,
    );
    expect(readOnly.exitCode).toBe(4);
    expect(readOnly.hint).toContain('read-only mount');
  });

  it('is not retried: a full disk stays full for the seconds a retry waits', () => {
    expect(full().transient).toBe(false);
  });
});
