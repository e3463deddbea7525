/** What goes into a server image of this package: the runtime's dependencies, not the engine-only Kubernetes client. */
import { join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOT_IN_IMAGES, productionPackages } from '../../../../src/engine/runners/docker/images.js';
import { ROOT } from '../../../support/app.js';

describe('productionPackages', () => {
  it('takes the production dependencies with theirs, and leaves out what only the kubernetes runner loads', async () => {
    const packages = await productionPackages(ROOT);
    const has = (name: string) => packages.includes(join(ROOT, 'node_modules', ...name.split('/')));
    for (const name of ['zod', 'undici', 'yaml', '@modelcontextprotocol/server']) expect(has(name), name).toBe(true);
    expect(NOT_IN_IMAGES.has('@kubernetes/client-node')).toBe(true);
    expect(has('@kubernetes/client-node')).toBe(false);
    // nor what only it needs
    expect(packages.some((dir) => dir.includes(`${sep}openid-client`) || dir.includes(`${sep}isomorphic-ws`))).toBe(
      false,
    );
  });
});
