#!/usr/bin/env node
// The CLI as bundled by `npm run build` (rolldown.config.js); dist/cli/entry.js is the same program, unbundled.
// CommonJS, as the bundle is: Node runs it without starting its ES module loader, which cost about
// 30 ms of `mcpctl --version` on Node 20, and every file of the bundle goes through Node's CommonJS
// loader and the compile cache of src/cli/compile-cache.ts.
'use strict';
require('../dist/bundle/mcpctl.cjs');
