/** This package's version, read once from its package.json (the same path from src/ and from dist/). */
import { createRequire } from 'node:module';

export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
