/**
 * Task status notifications (`notifications/tasks` of the io.modelcontextprotocol/tasks
 * extension) on a `subscriptions/listen` stream that names the tasks it follows, spoken to in
 * plain 2026-07-28 JSON-RPC over a real socket: the stream hears a task's states to its end, and
 * still hears list changes it asked for; a client without the extension is refused; another
 * user's stream is agreed to nothing and hears nothing; and a stream on one runtime hears a task
 * run by another runtime sharing its task folder, and hears it fail once that runtime falls silent.
 */
import { describe, expect, it } from 'vitest';
import { FIXTURES, makeTempDir, serveDefinition } from '../support/runtime.js';
import { modernRequest, taskClientCapabilities } from '../support/modern.js';
import { waitFor } from '../support/wait.js';

const DEFINITION = `${FIXTURES}/tasks/server.yaml`;
const TASKS = 'io.modelcontextprotocol/tasks';
const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

interface Who {
  user?: string;
  /** the client declares the tasks extension (default true) */
  tasks?: boolean;
  elicitation?: boolean;
}

function request(method: string, params: Record<string, unknown>, who: Who, id: number | string = 1) {
  return modernRequest(method, params, {
    client: 'task-notices-test',
    capabilities: taskClientCapabilities(who),
    id,
    ...(who.user === undefined ? {} : { user: who.user }),
  });
}

async function createTask(mcpUrl: string, args: Record<string, unknown>, who: Who, name = 'sleep'): Promise<string> {
  const response = await fetch(mcpUrl, request('tools/call', { name, arguments: args }, who));
  const answer = (await response.json()) as { result?: { resultType?: string; taskId?: string } };
  expect(answer.result?.resultType).toBe('task');
  return answer.result!.taskId!;
}

type Message = Record<string, unknown> & { method?: string; params?: Record<string, unknown> };

/** An open listen stream: every message it has carried so far, in order. */
async function listen(mcpUrl: string, notifications: Record<string, unknown>, who: Who) {
  const abort = new AbortController();
  const response = await fetch(mcpUrl, {
    ...request('subscriptions/listen', { notifications }, who, 'listen-1'),
    signal: abort.signal,
  });
  const messages: Message[] = [];
  let ended = false;
  const reading = (async () => {
    if (response.body === null || !response.headers.get('content-type')?.includes('text/event-stream')) return;
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of response.body) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) !== -1) {
          const data = buffered
            .slice(0, end)
            .split('\n')
            .find((line) => line.startsWith('data: '));
          if (data !== undefined) messages.push(JSON.parse(data.slice('data: '.length)) as Message);
          buffered = buffered.slice(end + 2);
        }
      }
    } catch {
      // aborted by the test
    }
    ended = true;
  })();
  return {
    response,
    messages,
    ended: () => ended,
    notices: () => messages.filter((m) => m.method === 'notifications/tasks').map((m) => m.params!),
    ack: () => waitFor('the acknowledgement', () => messages.find((m) => m.method === ACKNOWLEDGED)?.params),
    async [Symbol.asyncDispose]() {
      abort.abort();
      await reading;
    },
  };
}

const statuses = (notices: Record<string, unknown>[]) => notices.map((notice) => notice.status);

describe('task status notifications on subscriptions/listen', () => {
  it('hears a task working, then completed with its result, stamped with the subscription', async () => {
    await using served = await serveDefinition(DEFINITION);
    const ada = { user: 'ada' };
    const taskId = await createTask(served.mcpUrl, { ms: 600 }, ada);
    await using stream = await listen(served.mcpUrl, { taskIds: [taskId] }, ada);
    expect((await stream.ack()).notifications).toEqual({ taskIds: [taskId] });
    const done = await waitFor('the task to be heard completed', () =>
      stream.notices().find((notice) => notice.status === 'completed'),
    );
    expect(statuses(stream.notices())).toEqual(['working', 'completed']);
    expect(done).toMatchObject({
      taskId,
      result: { content: [{ type: 'text', text: 'slept 600 ms' }] },
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
    });
    // the stream stays open after the task ended: the client decides when it is done
    expect(stream.ended()).toBe(false);
  });

  it('hears a cancel', async () => {
    await using served = await serveDefinition(DEFINITION);
    const taskId = await createTask(served.mcpUrl, { ms: 30_000 }, {});
    await using stream = await listen(served.mcpUrl, { taskIds: [taskId] }, {});
    await stream.ack();
    await fetch(served.mcpUrl, request('tasks/cancel', { taskId }, {}));
    await waitFor('the cancel to be heard', () => stream.notices().find((notice) => notice.status === 'cancelled'));
    expect(statuses(stream.notices())).toEqual(['working', 'cancelled']);
  });

  it('carries what else the stream asked for (a resource update) beside the task', async () => {
    await using served = await serveDefinition(`${FIXTURES}/task-notices/server.yaml`);
    const taskId = await createTask(served.mcpUrl, { ms: 300 }, {});
    const asked = { taskIds: [taskId], resourceSubscriptions: ['test://note'] };
    await using stream = await listen(served.mcpUrl, asked, {});
    expect((await stream.ack()).notifications).toEqual(asked);
    await fetch(served.mcpUrl, request('tools/call', { name: 'touch', arguments: {} }, {}));
    await waitFor('the update and the end', () =>
      stream.notices().some((notice) => notice.status === 'completed') &&
      stream.messages.some((m) => m.method === 'notifications/resources/updated')
        ? true
        : undefined,
    );
    expect(statuses(stream.notices())).toEqual(['working', 'completed']);
  });

  it('hears a task wait for input, and work again once answered', async () => {
    await using served = await serveDefinition(DEFINITION);
    const who = { elicitation: true };
    const taskId = await createTask(served.mcpUrl, {}, who, 'ask');
    await using stream = await listen(served.mcpUrl, { taskIds: [taskId] }, who);
    const waiting = await waitFor('the question to be heard', () =>
      stream.notices().find((notice) => notice.status === 'input_required'),
    );
    const [key] = Object.keys(waiting.inputRequests as object);
    const inputResponses = { [key!]: { action: 'accept', content: { name: 'Ada' } } };
    await fetch(served.mcpUrl, request('tasks/update', { taskId, inputResponses }, who));
    await waitFor('the end to be heard', () => stream.notices().find((notice) => notice.status === 'completed'));
    const heard = statuses(stream.notices()).filter((status, i, all) => status !== all[i - 1]);
    expect(heard.slice(heard.indexOf('input_required'))).toEqual(['input_required', 'working', 'completed']);
  });

  it('refuses a client that does not declare the tasks extension (-32021)', async () => {
    await using served = await serveDefinition(DEFINITION);
    const taskId = await createTask(served.mcpUrl, { ms: 0 }, {});
    const response = await fetch(
      served.mcpUrl,
      request('subscriptions/listen', { notifications: { taskIds: [taskId] } }, { tasks: false }),
    );
    const answer = (await response.json()) as { error?: { code: number; data?: unknown } };
    expect(answer.error?.code).toBe(-32021);
    expect(answer.error?.data).toMatchObject({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
  });

  it('ATTACK: another user’s stream is agreed to nothing and hears nothing of the task', async () => {
    await using served = await serveDefinition(DEFINITION);
    const taskId = await createTask(served.mcpUrl, { ms: 400 }, { user: 'alice' });
    await using mallory = await listen(served.mcpUrl, { taskIds: [taskId, 'x'.repeat(43)] }, { user: 'mallory' });
    await using nobody = await listen(served.mcpUrl, { taskIds: [taskId] }, {});
    await using alice = await listen(served.mcpUrl, { taskIds: [taskId] }, { user: 'alice' });
    expect((await mallory.ack()).notifications).toEqual({});
    expect((await nobody.ack()).notifications).toEqual({});
    await waitFor('alice to hear the end', () => alice.notices().find((notice) => notice.status === 'completed'));
    expect(mallory.notices()).toEqual([]);
    expect(nobody.notices()).toEqual([]);
    expect(JSON.stringify(mallory.messages)).not.toContain(taskId);
  });
});

describe('two instances sharing a task folder', () => {
  it('a stream on one instance hears a task run by the other', async () => {
    await using folder = await makeTempDir('mcpctl-tasks-');
    await using first = await serveDefinition(DEFINITION, { tasksDir: folder.path });
    await using second = await serveDefinition(DEFINITION, { tasksDir: folder.path });
    const grace = { user: 'grace' };
    const taskId = await createTask(first.mcpUrl, { ms: 800 }, grace);
    await using stream = await listen(second.mcpUrl, { taskIds: [taskId] }, grace);
    expect((await stream.ack()).notifications).toEqual({ taskIds: [taskId] });
    const done = await waitFor('the other instance’s task to be heard completed', () =>
      stream.notices().find((notice) => notice.status === 'completed'),
    );
    expect(statuses(stream.notices())).toEqual(['working', 'completed']);
    expect(done).toMatchObject({ taskId, result: { content: [{ text: 'slept 800 ms' }] } });
  });

  it('a stream hears a task end as failed once the instance running it falls silent', async () => {
    await using folder = await makeTempDir('mcpctl-tasks-');
    // the first instance never shows it is alive within the second's patience: as if it had died
    await using first = await serveDefinition(DEFINITION, {
      tasksDir: folder.path,
      taskLiveness: { heartbeatMs: 60_000, staleAfterMs: 120_000 },
    });
    await using second = await serveDefinition(DEFINITION, {
      tasksDir: folder.path,
      taskLiveness: { heartbeatMs: 100, staleAfterMs: 1_000 },
    });
    const grace = { user: 'grace' };
    const taskId = await createTask(first.mcpUrl, { ms: 30_000 }, grace);
    await using stream = await listen(second.mcpUrl, { taskIds: [taskId] }, grace);
    await stream.ack();
    const failed = await waitFor('the task to be heard failed', () =>
      stream.notices().find((notice) => notice.status === 'failed'),
    );
    expect(failed).toMatchObject({ taskId, error: { code: -32603 } });
    expect(statuses(stream.notices()).at(-1)).toBe('failed');
  });
});
