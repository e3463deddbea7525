/**
 * Origins as allow-lists compare them: scheme, host and port, normalized; anything with a path,
 * credentials or another scheme is not an origin.
 */
import { describe, expect, it } from 'vitest';
import { allowedOrigin, normalizeOrigin, parseOrigins } from '../../src/shared/origins.js';

describe('origins', () => {
  it('normalizes case and default ports, and refuses what is not an http(s) origin', () => {
    expect(normalizeOrigin('HTTP://LocalHost:80')).toBe('http://localhost');
    expect(normalizeOrigin('https://app.example.com:443/')).toBe('https://app.example.com');
    expect(normalizeOrigin('http://[::1]:6274')).toBe('http://[::1]:6274');
    for (const bad of ['null', '', 'file:///etc', 'http://a.example/path', 'http://user:pw@a.example', 'localhost'])
      expect(normalizeOrigin(bad), bad).toBeUndefined();
  });

  it('lets in exactly the listed scheme, host and port; * lets in any origin', () => {
    const { origins, problems } = parseOrigins('http://localhost:6274, https://app.example.com  bad/value');
    expect(origins).toEqual(['http://localhost:6274', 'https://app.example.com']);
    expect(problems).toHaveLength(1);
    expect(allowedOrigin('http://localhost:6274', origins)).toBe('http://localhost:6274');
    for (const other of ['http://localhost:6275', 'https://localhost:6274', 'http://127.0.0.1:6274', 'null'])
      expect(allowedOrigin(other, origins), other).toBeUndefined();
    expect(allowedOrigin('http://evil.example', ['*'])).toBe('http://evil.example');
  });
});
