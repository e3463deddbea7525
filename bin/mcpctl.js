#!/usr/bin/env node
// The CLI as bundled by `npm run build` (rolldown.config.js); dist/cli/entry.js is the same program, unbundled.
// The bundle is CommonJS: required, so that each of its files goes through Node's CommonJS loader
// (and the compile cache of src/cli/compile-cache.ts) even when ES module hooks are registered.
import { createRequire } from 'node:module';

createRequire(import.meta.url)('../dist/bundle/mcpctl.cjs');
