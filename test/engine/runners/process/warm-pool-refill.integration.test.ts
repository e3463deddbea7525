/**
 * How the warm pool refills, with real warm runtime processes (run from dist/: `npm run build`
 * first): with none ready it loads as many at once as it may, and it stops them all when closed.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../src/engine/engine-log.js';
import { WarmPool } from '../../../../src/engine/runners/process/warm-pool.js';
import { isProcessAlive } from '../../../../src/engine/engine-lock.js';
import { spawnWarmRuntimeProcess } from '../../../../src/runtime/host/process.js';
import { requireBuilt } from '../../../support/app.js';
import { waitFor } from '../../../support/wait.js';

beforeAll(() => requireBuilt());

let pool: WarmPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('refilling the warm pool', () => {
  it('loads several processes at once when none is ready, and stops them all when closed', async () => {
    pool = new WarmPool({
      size: 2,
      parallel: 2,
      engine: '/tmp/mcpctl-warm-refill-test',
      load: async () => spawnWarmRuntimeProcess,
      logger: silentLogger,
    });
    let mostLoading = 0;
    pool.fill();
    const pids = await waitFor('two ready processes', () => {
      const { ready, warming } = pool!.stats();
      mostLoading = Math.max(mostLoading, warming);
      return ready === 2 ? pool!.pids() : undefined;
    });
    // one at a time, there would never have been two loading together
    expect(mostLoading).toBe(2);
    await pool.close();
    expect(pids.filter(isProcessAlive)).toEqual([]);
  });

  it('loads one at a time with parallel 1', async () => {
    pool = new WarmPool({
      size: 2,
      parallel: 1,
      engine: '/tmp/mcpctl-warm-refill-test',
      load: async () => spawnWarmRuntimeProcess,
      logger: silentLogger,
    });
    let mostLoading = 0;
    pool.fill();
    await waitFor('two ready processes', () => {
      const { ready, warming } = pool!.stats();
      mostLoading = Math.max(mostLoading, warming);
      return ready === 2 ? true : undefined;
    });
    expect(mostLoading).toBe(1);
  });
});
