/**
 * The image contract (how a built server becomes a container image and how a container of it runs)
 * lives with the runtime (src/runtime/image.ts), so the engine's Docker runner and the exports share it.
 */
export * from '../runtime/image.js';
