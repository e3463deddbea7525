/** Where the kubernetes runner looks for a kubeconfig, and what it says when there is none. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { missingKubeconfig } from '../../../../src/engine/runners/kubernetes/cluster.js';

const homes: string[] = [];
function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcpctl-kubehome-'));
  homes.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('missingKubeconfig', () => {
  it('says which places it looked in and what to set when none has a kubeconfig', () => {
    const dir = home();
    expect(missingKubeconfig(undefined, dir, false)).toBe(
      `no kubeconfig: KUBECONFIG is not set, ${join(dir, '.kube', 'config')} does not exist and the engine does not run in a pod; set KUBECONFIG to the kubeconfig of the cluster to deploy to`,
    );
    expect(missingKubeconfig('', dir, false)).toMatch(/^no kubeconfig/);
  });

  it('leaves the choice to the client when KUBECONFIG is set, ~/.kube/config exists, or the engine runs in a pod', () => {
    const dir = home();
    expect(missingKubeconfig('/somewhere/config', dir, false)).toBeUndefined();
    expect(missingKubeconfig(undefined, dir, true)).toBeUndefined();
    mkdirSync(join(dir, '.kube'));
    writeFileSync(join(dir, '.kube', 'config'), 'apiVersion: v1\n');
    expect(missingKubeconfig(undefined, dir, false)).toBeUndefined();
  });
});
