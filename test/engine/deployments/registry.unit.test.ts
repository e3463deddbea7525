import { describe, expect, it } from 'vitest';
import { Registry } from '../../../src/engine/deployments/registry.js';
import { GroupIndex } from '../../../src/engine/deployments/registry-index.js';
import type { LiveDeployment } from '../../../src/engine/deployments/live-deployment.js';
import type { Store } from '../../../src/engine/store/store.js';

type Status = 'deploying' | 'deployed' | 'stopped' | 'failed';
type Environment = 'production' | 'staging' | 'development';

/** What the registry reads of a deployment. */
interface FakeLive {
  id: string;
  routeName: string;
  domain: string | undefined;
  status: Status;
  environment: Environment;
  serverName: string;
  createdAt: string;
  released: number;
  releaseSecrets(): void;
}

function fake(
  id: string,
  about: Partial<Omit<FakeLive, 'id' | 'released' | 'releaseSecrets'>> = {},
): FakeLive & LiveDeployment {
  const live: FakeLive = {
    id,
    routeName: about.routeName ?? id,
    domain: about.domain,
    status: about.status ?? 'deployed',
    environment: about.environment ?? 'staging',
    serverName: about.serverName ?? 'calc',
    createdAt: about.createdAt ?? '2026-01-01T00:00:00.000Z',
    released: 0,
    releaseSecrets() {
      live.released += 1;
    },
  };
  return live as FakeLive & LiveDeployment;
}

const store = {} as Store;

/** The scans the indexes replaced: every answer of the registry must stay theirs. */
const reference = {
  byDomain(lives: LiveDeployment[], host: string) {
    let best: LiveDeployment | undefined;
    for (const live of lives) {
      if (live.domain !== host || live.status !== 'deployed') continue;
      if (best === undefined || live.createdAt > best.createdAt) best = live;
    }
    return best;
  },
  stable(lives: LiveDeployment[], name: string) {
    const match = /^(.+)\.(production|staging|development)$/.exec(name.toLowerCase().replace(/\.localhost$/, ''));
    if (match === null) return undefined;
    let best: LiveDeployment | undefined;
    for (const live of lives) {
      if (live.status !== 'deployed' || live.environment !== match[2] || live.serverName.toLowerCase() !== match[1])
        continue;
      if (best === undefined || live.createdAt > best.createdAt) best = live;
    }
    return best;
  },
  servesDomain(lives: LiveDeployment[], host: string) {
    return lives.some((live) => live.domain === host);
  },
  ofServer(lives: LiveDeployment[], name: string, environment: string) {
    return lives.filter((live) => live.serverName === name && live.environment === environment);
  },
};

const DOMAINS = ['a.example', 'b.example', 'c.example'];
const SERVERS = ['calc', 'Calc', 'weather', 'my.app'];
const ENVIRONMENTS: Environment[] = ['production', 'staging', 'development'];
const STATUSES: Status[] = ['deploying', 'deployed', 'stopped', 'failed'];

/** Every lookup the gateway and the service make, against the reference, for every name there is. */
function expectSameAnswers(registry: Registry): void {
  const lives = registry.all();
  expect([...registry.values()]).toEqual(lives);
  for (const host of [...DOMAINS, 'none.example', '']) {
    expect(registry.byDomain(host)).toBe(reference.byDomain(lives, host));
    expect(registry.servesDomain(host)).toBe(reference.servesDomain(lives, host));
    expect(registry.withDomain(host)).toEqual(lives.filter((live) => live.domain === host));
  }
  for (const server of [...SERVERS, 'other']) {
    for (const environment of ENVIRONMENTS) {
      for (const name of [`${server}.${environment}`, `${server.toUpperCase()}.${environment}.localhost`]) {
        expect(registry.stable(name)).toBe(reference.stable(lives, name));
      }
      expect(registry.ofServer(server, environment)).toEqual(reference.ofServer(lives, server, environment));
    }
  }
  expect(registry.stable('calc')).toBeUndefined();
  expect(registry.stable('calc.qa')).toBeUndefined();
}

/** A small deterministic generator, so a failure repeats. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('Registry indexes', () => {
  it('finds by domain, by stable name and by server as the scans did', () => {
    const registry = new Registry(store);
    const old = fake('deploy_1', { domain: 'a.example', createdAt: '2026-01-01T00:00:01.000Z' });
    const newer = fake('deploy_2', { domain: 'a.example', createdAt: '2026-01-01T00:00:02.000Z', status: 'deploying' });
    registry.add(old);
    registry.add(newer);
    expect(registry.byDomain('a.example')).toBe(old);
    expect(registry.stable('calc.staging')).toBe(old);
    expect(registry.stable('CALC.staging.localhost')).toBe(old);
    // the newer one takes over once deployed
    newer.status = 'deployed';
    expect(registry.byDomain('a.example')).toBe(newer);
    expect(registry.stable('calc.staging')).toBe(newer);
    // a stopped one still holds its domain for the host check, not for routing
    newer.status = 'stopped';
    old.status = 'stopped';
    expect(registry.byDomain('a.example')).toBeUndefined();
    expect(registry.servesDomain('a.example')).toBe(true);
    registry.remove(old);
    registry.remove(newer);
    expect(registry.servesDomain('a.example')).toBe(false);
    expect(registry.stable('calc.staging')).toBeUndefined();
    expect(old.released).toBe(1);
  });

  it('keeps the first added among deployments created at the same time', () => {
    const registry = new Registry(store);
    const first = fake('deploy_1', { domain: 'a.example' });
    const second = fake('deploy_2', { domain: 'a.example' });
    registry.add(first);
    registry.add(second);
    expect(registry.byDomain('a.example')).toBe(first);
    expect(registry.stable('calc.staging')).toBe(first);
  });

  it('a deployment added again under its id (a restore) replaces the one held', () => {
    const registry = new Registry(store);
    const before = fake('deploy_1', { domain: 'a.example', serverName: 'calc' });
    registry.add(before);
    const restored = fake('deploy_1', { domain: 'b.example', serverName: 'weather' });
    registry.add(restored);
    expect(registry.get('deploy_1')).toBe(restored);
    expect(registry.servesDomain('a.example')).toBe(false);
    expect(registry.byDomain('b.example')).toBe(restored);
    expect(registry.stable('calc.staging')).toBeUndefined();
    expect(registry.stable('weather.staging')).toBe(restored);
    // removing the one no longer held still forgets whatever holds its id, as before
    registry.remove(before);
    expect(registry.get('deploy_1')).toBeUndefined();
    expect(registry.servesDomain('b.example')).toBe(false);
    expect(registry.stable('weather.staging')).toBeUndefined();
  });

  it('route names follow add and remove', () => {
    const registry = new Registry(store);
    const live = fake('deploy_1', { routeName: 'stg-abc' });
    registry.add(live);
    expect(registry.byName('stg-abc')).toBe(live);
    registry.remove(live);
    expect(registry.byName('stg-abc')).toBeUndefined();
  });

  it('stays in step with the scans across deploys, state changes, removals, restores and retirement', () => {
    const next = random(7);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const registry = new Registry(store);
    let serial = 0;
    const gone: string[] = [];
    for (let step = 0; step < 600; step++) {
      const lives = registry.all();
      const roll = next();
      if (roll < 0.35 || lives.length === 0) {
        // a deploy, or a restore: an id the registry no longer holds, back with another object
        const restored =
          gone.length > 0 && next() < 0.2 ? gone.splice(Math.floor(next() * gone.length), 1)[0] : undefined;
        const id = restored ?? `deploy_${serial++}`;
        registry.add(
          fake(id, {
            domain: next() < 0.5 ? pick(DOMAINS) : undefined,
            serverName: pick(SERVERS),
            environment: pick(ENVIRONMENTS),
            status: pick(STATUSES),
            createdAt: `2026-01-01T00:00:${String(Math.floor(next() * 60)).padStart(2, '0')}.000Z`,
          }),
        );
      } else if (roll < 0.75) {
        // a state change: deployed, replaced, stopped, failed
        (pick(lives) as unknown as FakeLive).status = pick(STATUSES);
      } else if (roll < 0.95) {
        const removed = pick(lives);
        registry.remove(removed);
        gone.push(removed.id);
      } else {
        const before = new Set(lives.map((live) => live.id));
        registry.retire();
        for (const id of before) if (!registry.has(id)) gone.push(id);
      }
      expectSameAnswers(registry);
    }
    expect(serial).toBeGreaterThan(100);
  });
});

describe('GroupIndex', () => {
  it('keeps each group in the order added and drops empty groups', () => {
    const index = new GroupIndex<string>();
    index.add('k', 'a');
    index.add('k', 'b');
    index.add('j', 'c');
    expect([...index.get('k')]).toEqual(['a', 'b']);
    index.delete('k', 'a');
    index.delete('k', 'b');
    index.delete('k', 'b');
    index.delete('none', 'a');
    expect(index.has('k')).toBe(false);
    expect([...index.get('k')]).toEqual([]);
    expect(index.size).toBe(1);
  });
});
