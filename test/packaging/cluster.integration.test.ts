/**
 * The exported manifests against a real cluster's API: `kubectl apply --dry-run=server` sends every
 * object through the API server's own validation and admission, and stores nothing. Runs when
 * KUBECONFIG is set and kubectl is installed; skipped otherwise, with the reason in the test's name.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { kubernetesManifests } from '../../src/packaging/kubernetes-manifests.js';
import { writeManifestFolder } from '../../src/packaging/write-objects.js';

const run = promisify(execFile);

async function kubectlVersion(): Promise<string | undefined> {
  try {
    const { stdout } = await run('kubectl', ['version', '--client', '-o', 'json']);
    return (JSON.parse(stdout) as { clientVersion?: { gitVersion?: string } }).clientVersion?.gitVersion ?? 'unknown';
  } catch {
    return undefined;
  }
}

const kubeconfig = process.env.KUBECONFIG;
const kubectl = kubeconfig === undefined || kubeconfig === '' ? undefined : await kubectlVersion();
const skipReason =
  kubeconfig === undefined || kubeconfig === ''
    ? 'KUBECONFIG is not set'
    : kubectl === undefined
      ? 'kubectl is not installed'
      : undefined;
// said on stderr too: a reporter may show a skipped file without its tests' names
if (skipReason !== undefined) console.warn(`cluster test skipped: ${skipReason}`);
const title = (text: string) => (skipReason === undefined ? text : `${text} (skipped: ${skipReason})`);

describe('exported manifests on a real cluster', () => {
  it.skipIf(skipReason !== undefined)(
    title('the API server accepts every object (kubectl apply --dry-run=server)'),
    { timeout: 120_000 },
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'mcpctl-k8s-'));
      try {
        const result = kubernetesManifests(
          { name: 'dry-run-check', version: '1.0.0', digest: 'c'.repeat(64) },
          {
            environment: 'production',
            domain: 'dry-run-check.example.com',
            scaling: { min_instances: 2, max_instances: 5 },
            envValues: { API_TOKEN: 'not-a-real-token' },
            envWithoutValue: ['OTHER_KEY'],
            namespace: 'default',
          },
        );
        await writeManifestFolder(dir, result.objects);
        const { stdout } = await run('kubectl', ['apply', '--dry-run=server', '-f', dir], {
          env: process.env,
          timeout: 100_000,
        });
        for (const object of result.objects) expect(stdout).toContain(`${object.kind.toLowerCase()}`);
        expect(stdout.match(/\(server dry run\)/g)).toHaveLength(result.objects.length);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
