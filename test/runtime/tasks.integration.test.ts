/**
 * Tools that run as tasks (the io.modelcontextprotocol/tasks extension), spoken to in plain
 * 2026-07-28 JSON-RPC over a real socket: a task is created and followed to its end, fails,
 * waits for input, is cancelled; a client without the extension gets an ordinary call or -32021;
 * another user cannot read or steer a task; and two runtimes sharing one task folder (two
 * instances of a deployment) answer for each other's tasks, and a task whose instance stopped
 * ends as failed instead of reading `working` for ever.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startRuntimeProcess } from '../../src/runtime/host/process.js';
import { createFolderTaskStore } from '../../src/runtime/server/task-store.js';
import { bundleDefinition, FIXTURES, makeTempDir, serveDefinition } from '../support/runtime.js';
import { modernRpc, taskClientCapabilities } from '../support/modern.js';
import { waitFor } from '../support/wait.js';

const DEFINITION = `${FIXTURES}/tasks/server.yaml`;
const TASKS = 'io.modelcontextprotocol/tasks';

interface Answer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

interface CallOptions {
  user?: string;
  /** the client declares the tasks extension (default true) */
  tasks?: boolean;
  elicitation?: boolean;
}

/** One 2026-07-28 request: its envelope in `_meta`, its routing headers. */
function rpc(mcpUrl: string, method: string, params: Record<string, unknown>, options: CallOptions = {}) {
  return modernRpc(mcpUrl, method, params, {
    client: 'tasks-test',
    capabilities: taskClientCapabilities(options),
    ...(options.user === undefined ? {} : { user: options.user }),
  }) as Promise<Answer>;
}

async function createTask(mcpUrl: string, name: string, args: Record<string, unknown>, options: CallOptions = {}) {
  const answer = await rpc(mcpUrl, 'tools/call', { name, arguments: args }, options);
  expect(answer.result?.resultType).toBe('task');
  return answer.result!.taskId as string;
}

async function settled(mcpUrl: string, taskId: string, options: CallOptions = {}) {
  return waitFor(`task ${taskId} to end`, async () => {
    const { result } = await rpc(mcpUrl, 'tasks/get', { taskId }, options);
    return ['completed', 'failed', 'cancelled'].includes(result?.status as string) ? result : undefined;
  });
}

async function statusOf(mcpUrl: string, taskId: string, options: CallOptions = {}) {
  return (await rpc(mcpUrl, 'tasks/get', { taskId }, options)).result!;
}

describe('tools that run as tasks', () => {
  it('creates a task, reads it working, then completed with its result inlined', async () => {
    await using served = await serveDefinition(DEFINITION);
    const created = await rpc(served.mcpUrl, 'tools/call', { name: 'sleep', arguments: { ms: 300 } });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working', ttlMs: expect.any(Number) });
    const taskId = created.result!.taskId as string;
    expect(taskId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await statusOf(served.mcpUrl, taskId)).toMatchObject({ taskId, status: 'working', resultType: 'complete' });
    const done = await settled(served.mcpUrl, taskId);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'slept 300 ms' }] } });
    expect(done).not.toHaveProperty('error');
  });

  it('reports a tool error as completed with isError, and a protocol error as failed', async () => {
    await using served = await serveDefinition(DEFINITION);
    const toolError = await settled(served.mcpUrl, await createTask(served.mcpUrl, 'fail', {}));
    expect(toolError).toMatchObject({ status: 'completed', result: { isError: true } });
    const protocolError = await settled(served.mcpUrl, await createTask(served.mcpUrl, 'broken', {}));
    expect(protocolError).toMatchObject({ status: 'failed', error: { code: -32603, message: 'it broke' } });
    expect(protocolError).not.toHaveProperty('result');
  });

  it('cancels a running task (its handler is stopped), and cancelling a finished one changes nothing', async () => {
    await using served = await serveDefinition(DEFINITION);
    const before = (globalThis as { tasksAborted?: number }).tasksAborted ?? 0;
    const taskId = await createTask(served.mcpUrl, 'sleep', { ms: 30_000 });
    expect((await rpc(served.mcpUrl, 'tasks/cancel', { taskId })).result).toEqual(
      expect.objectContaining({ resultType: 'complete' }),
    );
    expect(await settled(served.mcpUrl, taskId)).toMatchObject({ status: 'cancelled' });
    await waitFor('the handler to stop', () =>
      ((globalThis as { tasksAborted?: number }).tasksAborted ?? 0) > before ? true : undefined,
    );
    const finished = await createTask(served.mcpUrl, 'sleep', { ms: 0 });
    await settled(served.mcpUrl, finished);
    expect((await rpc(served.mcpUrl, 'tasks/cancel', { taskId: finished })).result?.resultType).toBe('complete');
    expect(await statusOf(served.mcpUrl, finished)).toMatchObject({ status: 'completed' });
  });

  it('waits for input (input_required) and resumes on tasks/update', async () => {
    await using served = await serveDefinition(DEFINITION);
    const options = { elicitation: true };
    const taskId = await createTask(served.mcpUrl, 'ask', {}, options);
    const waiting = await waitFor('the question', async () => {
      const result = await statusOf(served.mcpUrl, taskId, options);
      return result.status === 'input_required' ? result : undefined;
    });
    const requests = waiting.inputRequests as Record<string, { method: string }>;
    const [key] = Object.keys(requests);
    expect(requests[key!]?.method).toBe('elicitation/create');
    const update = { taskId, inputResponses: { [key!]: { action: 'accept', content: { name: 'Ada' } } } };
    expect((await rpc(served.mcpUrl, 'tasks/update', update, options)).result?.resultType).toBe('complete');
    expect(await settled(served.mcpUrl, taskId, options)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'hello Ada' }] },
    });
  });

  it('runs an optional tool as an ordinary call, and refuses a required one, for a client without the extension', async () => {
    await using served = await serveDefinition(DEFINITION);
    const ordinary = await rpc(served.mcpUrl, 'tools/call', { name: 'sleep', arguments: { ms: 0 } }, { tasks: false });
    expect(ordinary.result).toMatchObject({ resultType: 'complete', content: [{ text: 'slept 0 ms' }] });
    expect(ordinary.result).not.toHaveProperty('taskId');
    const refused = await rpc(served.mcpUrl, 'tools/call', { name: 'must_task', arguments: {} }, { tasks: false });
    expect(refused.error?.code).toBe(-32021);
    expect(refused.error?.data).toMatchObject({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
    const gated = await rpc(served.mcpUrl, 'tasks/get', { taskId: 'x'.repeat(43) }, { tasks: false });
    expect(gated.error?.code).toBe(-32021);
    const plain = await rpc(served.mcpUrl, 'tools/call', { name: 'plain', arguments: {} });
    expect(plain.result).toMatchObject({ resultType: 'complete', content: [{ text: 'plain' }] });
  });

  it('lets a handler with start: handler answer at once, or go on as a task once it calls startTask()', async () => {
    await using served = await serveDefinition(DEFINITION);
    const direct = await rpc(served.mcpUrl, 'tools/call', { name: 'later', arguments: {} });
    expect(direct.result).toMatchObject({ resultType: 'complete', content: [{ text: 'answered at once' }] });
    const taskId = await createTask(served.mcpUrl, 'later', { become_task: true });
    expect(await settled(served.mcpUrl, taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'answered as a task' }] },
    });
  });

  it('ATTACK: another user cannot read, answer or cancel a task, nor find one by a made-up id', async () => {
    await using served = await serveDefinition(DEFINITION);
    const alice = { user: 'alice' };
    const mallory = { user: 'mallory' };
    const taskId = await createTask(served.mcpUrl, 'sleep', { ms: 800 }, alice);
    for (const [method, params] of [
      ['tasks/get', { taskId }],
      ['tasks/cancel', { taskId }],
      ['tasks/update', { taskId, inputResponses: {} }],
    ] as const) {
      const answer = await rpc(served.mcpUrl, method, params, mallory);
      expect(answer.error?.code, method).toBe(-32602);
      expect(answer.result).toBeUndefined();
    }
    // nobody is anybody: a call without a user id is not alice either
    expect((await rpc(served.mcpUrl, 'tasks/get', { taskId })).error?.code).toBe(-32602);
    // mallory's cancel did nothing: alice's task ends as it would have
    expect(await settled(served.mcpUrl, taskId, alice)).toMatchObject({ status: 'completed' });
    for (const made of ['../../../etc/passwd', 'x'.repeat(43), '']) {
      expect((await rpc(served.mcpUrl, 'tasks/get', { taskId: made }, alice)).error?.code).toBe(-32602);
    }
  });
});

describe('two instances sharing a task folder', () => {
  it('answers on one instance for a task running on the other: get, update and cancel', async () => {
    await using folder = await makeTempDir('mcpctl-tasks-');
    await using first = await serveDefinition(DEFINITION, { tasksDir: folder.path });
    await using second = await serveDefinition(DEFINITION, { tasksDir: folder.path });
    const options = { user: 'ada', elicitation: true };

    const sleeping = await createTask(first.mcpUrl, 'sleep', { ms: 300 }, options);
    expect(await statusOf(second.mcpUrl, sleeping, options)).toMatchObject({ status: 'working' });
    expect(await settled(second.mcpUrl, sleeping, options)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'slept 300 ms' }] },
    });

    const asking = await createTask(first.mcpUrl, 'ask', {}, options);
    const waiting = await waitFor('the question, read on the other instance', async () => {
      const result = await statusOf(second.mcpUrl, asking, options);
      return result.status === 'input_required' ? result : undefined;
    });
    const [key] = Object.keys(waiting.inputRequests as object);
    const answer = { [key!]: { action: 'accept', content: { name: 'Grace' } } };
    await rpc(second.mcpUrl, 'tasks/update', { taskId: asking, inputResponses: answer }, options);
    expect(await settled(first.mcpUrl, asking, options)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'hello Grace' }] },
    });

    const long = await createTask(first.mcpUrl, 'sleep', { ms: 30_000 }, options);
    await rpc(second.mcpUrl, 'tasks/cancel', { taskId: long }, options);
    // the instance running it notices, stops the handler and records the end itself
    await waitFor('the running instance to record the cancel', async () => {
      const result = await statusOf(first.mcpUrl, long, options);
      return result.status === 'cancelled' ? result : undefined;
    });
  });

  it('ATTACK: a runtime with another folder (another deployment) does not know the task', async () => {
    await using mine = await makeTempDir('mcpctl-tasks-');
    await using theirs = await makeTempDir('mcpctl-tasks-');
    await using first = await serveDefinition(DEFINITION, { tasksDir: mine.path });
    await using other = await serveDefinition(DEFINITION, { tasksDir: theirs.path });
    const taskId = await createTask(first.mcpUrl, 'sleep', { ms: 0 }, { user: 'ada' });
    expect((await rpc(other.mcpUrl, 'tasks/get', { taskId }, { user: 'ada' })).error?.code).toBe(-32602);
  });
});

describe('a task whose instance stopped', () => {
  it('reads as failed on another instance once the killed instance stays silent, and stays so', async () => {
    await using folder = await makeTempDir('mcpctl-tasks-');
    await using temp = await makeTempDir();
    const { dir: bundleDir } = await bundleDefinition(DEFINITION, temp.path);
    // the instance that dies is a process of its own (default heartbeat); the reader waits a little longer
    await using dying = await startRuntimeProcess({
      bundleDir,
      env: { MCPCTL_TASKS_DIR: folder.path },
      sharedDir: folder.path,
    });
    await using reader = await serveDefinition(DEFINITION, {
      tasksDir: folder.path,
      taskLiveness: { heartbeatMs: 100, staleAfterMs: 5_000 },
    });
    const taskId = await createTask(dying.mcpUrl, 'sleep', { ms: 60_000 });
    expect(await statusOf(reader.mcpUrl, taskId)).toMatchObject({ status: 'working' });

    process.kill(dying.pid, 'SIGKILL');
    await dying.exited;
    const failed = await waitFor('the task to read as failed', async () => {
      const result = await statusOf(reader.mcpUrl, taskId);
      return result.status === 'working' ? undefined : result;
    });
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: expect.stringMatching(/instance running the task stopped/) },
    });
    expect(failed).not.toHaveProperty('result');
    // recorded once: a cancel changes nothing, and every later read answers the same
    await rpc(reader.mcpUrl, 'tasks/cancel', { taskId });
    expect(await statusOf(reader.mcpUrl, taskId)).toEqual(failed);
    expect((await readdir(join(folder.path, taskId))).filter((name) => name.startsWith('stopped'))).toEqual([
      'stopped',
    ]);
  });

  it('is not taken for stopped while its instance is alive, however long it runs', async () => {
    await using folder = await makeTempDir('mcpctl-tasks-');
    const taskLiveness = { heartbeatMs: 100, staleAfterMs: 1_500 };
    await using first = await serveDefinition(DEFINITION, { tasksDir: folder.path, taskLiveness });
    await using second = await serveDefinition(DEFINITION, { tasksDir: folder.path, taskLiveness });
    const taskId = await createTask(first.mcpUrl, 'sleep', { ms: 3_500 });
    const seen = new Set<string>();
    const done = await waitFor('the task to end', async () => {
      const result = await statusOf(second.mcpUrl, taskId);
      seen.add(result.status as string);
      return result.status === 'working' ? undefined : result;
    });
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ text: 'slept 3500 ms' }] } });
    expect([...seen]).toEqual(['working', 'completed']);
  });

  it('an instance that was taken for stopped stops the handler and does not write over the outcome', async () => {
    await using folder = await makeTempDir('mcpctl-tasks-');
    await using owner = await serveDefinition(DEFINITION, {
      tasksDir: folder.path,
      taskLiveness: { heartbeatMs: 50, staleAfterMs: 60_000 },
    });
    const before = (globalThis as { tasksAborted?: number }).tasksAborted ?? 0;
    const taskId = await createTask(owner.mcpUrl, 'sleep', { ms: 30_000 });
    // a reader with a much shorter patience than the owner's heartbeat: it declares the owner stopped
    const impatient = createFolderTaskStore(folder.path, { heartbeatMs: 50, staleAfterMs: -1 });
    expect(await impatient.read(taskId)).toMatchObject({ status: 'failed', error: { code: -32603 } });
    await waitFor('the handler to stop', () =>
      ((globalThis as { tasksAborted?: number }).tasksAborted ?? 0) > before ? true : undefined,
    );
    expect(await statusOf(owner.mcpUrl, taskId)).toMatchObject({ status: 'failed', error: { code: -32603 } });
  });
});
