/**
 * `mcpctl serve` refuses an MCPCTL_API_KEY that can be guessed (under 128 bits), before it opens
 * any port, naming the variable and how to make a good key.
 */
import { describe, expect, it } from 'vitest';
import { createSandbox, runCli } from '../support/cli.js';

describe('mcpctl serve and MCPCTL_API_KEY', () => {
  it('refuses a 16-character key with exit 3, saying how long a key must be and how to make one', async () => {
    const box = await createSandbox({ MCPCTL_API_KEY: '0123456789abcdef' });
    try {
      const result = await runCli(['serve', '--port', '0'], { env: box.env, cwd: box.dir });
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('MCPCTL_API_KEY cannot be used: it has 16 characters and needs at least 32');
      expect(result.stderr).toContain('openssl rand -hex 32');
    } finally {
      await box.cleanup();
    }
  });
});
