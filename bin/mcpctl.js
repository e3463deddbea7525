#!/usr/bin/env node
// The CLI as bundled by `npm run build` (rolldown.config.js); dist/cli/entry.js is the same program, unbundled.
import '../dist/bundle/mcpctl.js';
