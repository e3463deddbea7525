/**
 * The Kubernetes objects of a server, for `mcpctl export kubernetes`. They are made in
 * src/runtime/kubernetes-manifests.ts, below both this layer and the engine, so the engine's
 * kubernetes runner applies exactly the objects this export writes.
 */
export * from '../runtime/kubernetes-manifests.js';
