/**
 * The bounded queues of work that needs a process: how many run at once, in which order the
 * others start, what a waiting item is told, what dropping one does, and when new work is refused.
 */
import { describe, expect, it } from 'vitest';
import type { TestResult } from '../../src/api/contract.js';
import { WorkQueue } from '../../src/engine/admission.js';
import { startEngine } from '../../src/engine/engine.js';
import { silentLogger } from '../../src/engine/engine-log.js';
import { HttpError } from '../../src/engine/http/respond.js';
import { DEFAULT_LIMITS, engineLimits } from '../../src/engine/engine-limits.js';
import { call, tempHome } from '../support/app.js';
import { waitFor } from '../support/wait.js';

/** Work that runs until `finish()` is called. */
function gate() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { done, finish };
}

describe('WorkQueue', () => {
  it('runs at most `concurrency` items at once and starts the rest by priority, then arrival', async () => {
    const queue = new WorkQueue('starts', { concurrency: 2, maxWaiting: 100 });
    let running = 0;
    let most = 0;
    const order: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const add = (name: string, priority = 0) => {
      const g = gate();
      gates.set(name, g);
      return queue.run(
        async () => {
          order.push(name);
          running += 1;
          most = Math.max(most, running);
          await g.done;
          running -= 1;
        },
        { priority },
      );
    };
    const all = [add('a'), add('b'), add('c'), add('d'), add('restart', 3), add('e')];
    expect(queue.stats()).toEqual({ running: 2, waiting: 4, concurrency: 2 });
    for (const name of ['a', 'b', 'restart', 'c', 'd', 'e']) {
      await new Promise((resolve) => setImmediate(resolve));
      gates.get(name)!.finish();
    }
    await Promise.all(all);
    expect(most).toBe(2);
    expect(order).toEqual(['a', 'b', 'restart', 'c', 'd', 'e']);
    expect(queue.stats()).toEqual({ running: 0, waiting: 0, concurrency: 2 });
  });

  it('tells a waiting item how many are ahead, whenever that changes, until it starts', async () => {
    const queue = new WorkQueue('builds', { concurrency: 1, maxWaiting: 100 });
    const first = gate();
    const second = gate();
    const told: number[] = [];
    const running = [queue.run(() => first.done), queue.run(() => second.done)];
    const third = queue.run(async () => 'done', { onWait: (ahead) => told.push(ahead) });
    expect(told).toEqual([1]);
    first.finish();
    await running[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(told).toEqual([1, 0]);
    second.finish();
    expect(await third).toBe('done');
    expect(told).toEqual([1, 0]);
  });

  it('drops an item whose signal aborts while it waits, and keeps the slot of one that runs', async () => {
    const queue = new WorkQueue('starts', { concurrency: 1, maxWaiting: 100 });
    const first = gate();
    const controller = new AbortController();
    const running = queue.run(() => first.done, { signal: controller.signal });
    let ran = false;
    const waitingController = new AbortController();
    const waiting = queue.run(async () => (ran = true), { signal: waitingController.signal });
    waitingController.abort(new Error('stopped while waiting'));
    await expect(waiting).rejects.toThrow('stopped while waiting');
    // aborting the running one does not free its slot before it ends
    controller.abort();
    const next = queue.run(async () => 'next');
    expect(queue.stats()).toMatchObject({ running: 1, waiting: 1 });
    first.finish();
    await running;
    expect(await next).toBe('next');
    expect(ran).toBe(false);
  });

  it('drops what waits when it closes, lets what runs finish, and refuses new work', async () => {
    const queue = new WorkQueue('builds', { concurrency: 1, maxWaiting: 10 });
    const first = gate();
    const running = queue.run(async () => {
      await first.done;
      return 'finished';
    });
    const waiting = queue.run(async () => 'never');
    queue.close();
    await expect(waiting).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/stopping/) });
    await expect(queue.run(async () => 'late')).rejects.toMatchObject({ code: 'unavailable' });
    first.finish();
    expect(await running).toBe('finished');
  });

  it('refuses new work with 503 and Retry-After only when too much already waits', async () => {
    const queue = new WorkQueue('tests', { concurrency: 1, maxWaiting: 2 });
    const first = gate();
    const items = [queue.run(() => first.done), queue.run(async () => undefined)];
    expect(() => queue.admit('test runs')).not.toThrow();
    items.push(queue.run(async () => undefined));
    let refusal: unknown;
    try {
      queue.admit('test runs');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(HttpError);
    expect(refusal).toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/2 test runs are already waiting/),
    });
    expect(Number((refusal as HttpError).headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    first.finish();
    await Promise.all(items);
    expect(() => queue.admit('test runs')).not.toThrow();
  });
});

describe('the sizes of the queues', () => {
  it('default to one slot per core and take MCPCTL_* variables, naming a bad one', () => {
    const limits = engineLimits({ env: { MCPCTL_START_CONCURRENCY: '3', MCPCTL_QUEUE_MAX: '50' } });
    expect(limits.admission).toMatchObject({ starts: 3, maxWaiting: 50 });
    expect(limits.admission.builds).toBeGreaterThanOrEqual(1);
    expect(() => engineLimits({ env: { MCPCTL_BUILD_CONCURRENCY: '0' } })).toThrow(
      /MCPCTL_BUILD_CONCURRENCY must be a whole number/,
    );
    expect(() => engineLimits({ env: { MCPCTL_TEST_CONCURRENCY: 'many' } })).toThrow(/MCPCTL_TEST_CONCURRENCY/);
  });
});

describe('test runs on the engine', () => {
  it('go through the test queue: with one slot, one runs at a time and each gets its answer; /v1/health shows the queues', async () => {
    const home = await tempHome();
    let running = 0;
    let most = 0;
    let health: unknown;
    const engine = await startEngine({
      home: home.dir,
      host: '127.0.0.1',
      port: 0,
      apiKey: 'test-key-0123456789abcdef0123456789',
      version: '0.0.0-test',
      logger: silentLogger,
      env: {},
      limits: { ratePerSecond: 0, admission: { ...DEFAULT_LIMITS.admission, tests: 1 } },
      deployments: false,
      tests: {
        models: () => [],
        async test(): Promise<TestResult> {
          running += 1;
          most = Math.max(most, running);
          // the first run holds its slot until the other two wait behind it: the engine says so
          health ??= await waitFor('the other runs to wait', async () => {
            const queue = (await call(engine.url, 'GET', '/v1/health', { key: 'test-key-0123456789abcdef0123456789' }))
              .body.data.queues.tests as { waiting: number };
            return queue.waiting === 2 ? queue : undefined;
          });
          running -= 1;
          return { ai_response: 'ok', tools_used: [], resources_accessed: [], execution_time: 0.05, success_rate: 1 };
        },
      },
    });
    try {
      await engine.store.putServer({
        server: {
          mcp_id: 'mcp_queued',
          name: 'queued',
          status: 'ready',
          url: 'http://x',
          build_time: 0,
          created_at: new Date().toISOString(),
        },
        bundleDir: '/nonexistent',
        digest: 'd',
        definition: { name: 'queued', template: 'basic' },
      });
      const answers = await Promise.all(
        [1, 2, 3].map(() =>
          call(engine.url, 'POST', '/v1/test', {
            json: { mcp_id: 'mcp_queued', message: 'hi' },
            key: 'test-key-0123456789abcdef0123456789',
          }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(most).toBe(1);
      expect(health).toMatchObject({ running: 1, waiting: 2, concurrency: 1 });
    } finally {
      await engine.close();
      await home.cleanup();
    }
  });
});
