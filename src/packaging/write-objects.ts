/**
 * Kubernetes objects as YAML: one multi-document stream, or one file per object in a folder.
 * A folder written before keeps nothing stale: a manifest this export no longer makes (an Ingress
 * once the domain is gone) is removed, so `kubectl apply -f DIR` never applies an old one.
 */
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubernetesObject as ManifestObject } from './kubernetes-manifests.js';
import type { PodMonitorObject, PrometheusRuleObject } from './prometheus-rule.js';

/** What an export writes: the objects that run the server, what scrapes it, and its alert rules. */
export type KubernetesObject = ManifestObject | PodMonitorObject | PrometheusRuleObject;

/** Every file name an export may write; only these are ever replaced or removed in a folder. */
export const MANIFEST_FILES = [
  'secret.yaml',
  'service.yaml',
  'deployment.yaml',
  'poddisruptionbudget.yaml',
  'horizontalpodautoscaler.yaml',
  'ingress.yaml',
  'networkpolicy.yaml',
  'podmonitor.yaml',
  'prometheusrule.yaml',
] as const;

export function manifestFileName(object: KubernetesObject): string {
  return `${object.kind.toLowerCase()}.yaml`;
}

/** The objects as YAML documents, each after the header comment lines. */
export async function toYamlDocuments(objects: KubernetesObject[], header: string[] = []): Promise<string[]> {
  const { stringify } = await import('yaml');
  const comment = header.map((line) => `# ${line}\n`).join('');
  return objects.map(
    (object) => `${comment}${stringify(object, { lineWidth: 0, aliasDuplicateObjects: false, version: '1.1' })}`,
  );
}

/** One YAML stream, documents separated by `---`, the header once at the top. */
export async function toYamlStream(objects: KubernetesObject[], header: string[] = []): Promise<string> {
  const comment = header.map((line) => `# ${line}\n`).join('');
  return `${comment}${(await toYamlDocuments(objects)).join('---\n')}`;
}

/**
 * Writes one file per object in `dir` (created if needed), each atomically; a Secret's file is
 * readable by its owner only. Returns the paths written and the stale manifests removed.
 */
export async function writeManifestFolder(
  dir: string,
  objects: KubernetesObject[],
  header: string[] = [],
): Promise<{ written: string[]; removed: string[] }> {
  await mkdir(dir, { recursive: true });
  const documents = await toYamlDocuments(objects, header);
  const written: string[] = [];
  for (const [index, object] of objects.entries()) {
    const file = join(dir, manifestFileName(object));
    const temp = `${file}.tmp-${process.pid}`;
    await writeFile(temp, documents[index]!, { mode: object.kind === 'Secret' ? 0o600 : 0o644 });
    await rename(temp, file);
    written.push(file);
  }
  const made = new Set(objects.map(manifestFileName));
  const present = new Set(await readdir(dir));
  const removed: string[] = [];
  for (const name of MANIFEST_FILES) {
    if (made.has(name) || !present.has(name)) continue;
    await rm(join(dir, name), { force: true });
    removed.push(join(dir, name));
  }
  return { written, removed };
}
