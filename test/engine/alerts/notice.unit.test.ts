/** A production deploy says it is not watched only while the engine has no alert channel. */
import { describe, expect, it } from 'vitest';
import { noticesFor } from '../../../src/engine/deployments/new-record.js';

describe('the "no alerting" notice', () => {
  it.each(['process', 'kubernetes'])('goes when a channel is set (%s runner)', (runner) => {
    const without = noticesFor('production', undefined, { baseUrl: 'http://127.0.0.1:7070' }, runner);
    const withChannel = noticesFor(
      'production',
      undefined,
      { baseUrl: 'http://127.0.0.1:7070', alerting: true },
      runner,
    );
    expect(without.filter((n) => n.startsWith('no alerting'))).toHaveLength(1);
    expect(withChannel.filter((n) => n.startsWith('no alerting'))).toEqual([]);
    expect(noticesFor('staging', undefined, { baseUrl: 'http://127.0.0.1:7070' }, runner).join()).not.toContain(
      'no alerting',
    );
  });
});
