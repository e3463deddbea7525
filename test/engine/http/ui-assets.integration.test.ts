/**
 * The dashboard's files under /ui, from a temp folder: the right types, ETag and 304, the
 * Content-Security-Policy and the other headers on every answer, nothing outside the folder (raw
 * request targets, as a browser would never send them), and a clear 404 for an engine without a
 * built dashboard.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptsGzip, UI_CONTENT_SECURITY_POLICY, uiFileOf } from '../../../src/engine/http/ui-assets.js';
import { call, rawExchange, startTestApp, type TestApp } from '../../support/app.js';
import { tempDir, type TempDir } from '../../support/temp.js';

const INDEX = '<!doctype html><title>mcpctl</title><script src="app.js" type="module"></script>';
const SECRET = 'secret-outside-the-folder';

let folder: TempDir;
let target: TestApp;

beforeAll(async () => {
  folder = await tempDir('mcpctl-ui-');
  const ui = join(folder.dir, 'ui');
  await mkdir(join(ui, 'icons'), { recursive: true });
  await writeFile(join(ui, 'index.html'), INDEX);
  await writeFile(join(ui, 'app.js'), 'console.log(1);\n');
  await writeFile(join(ui, 'app.css'), 'body { margin: 0 }\n');
  await writeFile(join(ui, 'icons', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(join(ui, '.env'), SECRET);
  await writeFile(join(folder.dir, 'secret.txt'), SECRET);
  await symlink(join(folder.dir, 'secret.txt'), join(ui, 'link.txt'));
  target = await startTestApp({ uiDir: ui });
});
afterAll(async () => {
  await target.close();
  await folder.cleanup();
});

function expectUiHeaders(headers: Headers): void {
  expect(headers.get('content-security-policy')).toBe(
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
      "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  );
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
}

describe('the files', () => {
  it('/ui redirects to /ui/, which is index.html', async () => {
    const redirect = await fetch(`${target.url}/ui`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('/ui/');
    expectUiHeaders(redirect.headers);

    const index = await call(target.url, 'GET', '/ui/', { key: null });
    expect(index.status).toBe(200);
    expect(index.text).toBe(INDEX);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expectUiHeaders(index.headers);
  });

  it.each([
    ['/ui/app.js', 'text/javascript; charset=utf-8'],
    ['/ui/app.css', 'text/css; charset=utf-8'],
    ['/ui/icons/logo.svg', 'image/svg+xml'],
    ['/ui/index.html', 'text/html; charset=utf-8'],
  ])('%s is served as %s, without a key', async (path, type) => {
    const answer = await call(target.url, 'GET', path, { key: null });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(type);
    expectUiHeaders(answer.headers);
  });

  it('answers 304 to a matching If-None-Match, and HEAD without a body', async () => {
    const first = await call(target.url, 'GET', '/ui/app.js', { key: null });
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await call(target.url, 'GET', '/ui/app.js', { key: null, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expectUiHeaders(again.headers);
    const head = await fetch(`${target.url}/ui/app.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String('console.log(1);\n'.length));
    expect(await head.text()).toBe('');
  });

  it('sends text files gzip-compressed to a browser that takes gzip, and a rebuilt file as it is now', async () => {
    const script = join(folder.dir, 'ui', 'big.js');
    const first = `export const text = ${JSON.stringify('mcpctl '.repeat(2000))};\n`;
    await writeFile(script, first);
    const zipped = await rawGet(`${target.url}/ui/big.js`, { 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
    expect(zipped.body.length).toBeLessThan(first.length / 10);
    expect(gunzipSync(zipped.body).toString('utf8')).toBe(first);
    const plain = await rawGet(`${target.url}/ui/big.js`, { 'accept-encoding': 'gzip;q=0, *' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString('utf8')).toBe(first);
    // a build writes the file again: the next answer is the new one, never the one read before
    const second = first.replace('mcpctl', 'engine');
    await writeFile(script, second);
    const rebuilt = await rawGet(`${target.url}/ui/big.js`, { 'accept-encoding': 'gzip' });
    expect(gunzipSync(rebuilt.body).toString('utf8')).toBe(second);
    expect(rebuilt.headers.etag).not.toBe(zipped.headers.etag);
  });

  it('reads Accept-Encoding as RFC 9110 does', () => {
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('deflate, gzip;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip(['br', 'GZIP'])).toBe(true);
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip;q=0, *')).toBe(false);
    expect(acceptsGzip('*;q=0')).toBe(false);
  });

  it('refuses other methods, and answers 404 with the headers for a missing file', async () => {
    const post = await call(target.url, 'POST', '/ui/app.js', { key: null, json: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const missing = await call(target.url, 'GET', '/ui/nothing.js', { key: null });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    expectUiHeaders(missing.headers);
    expect((await call(target.url, 'GET', '/ui/icons', { key: null })).status).toBe(404);
  });
});

describe('leaving the folder', () => {
  it.each([
    '/ui/../secret.txt',
    '/ui/%2e%2e/secret.txt',
    '/ui/%2E%2E%2Fsecret.txt',
    '/ui/..%2fsecret.txt',
    '/ui/icons/..%5c..%5csecret.txt',
    '/ui/icons/%2e%2e/%2e%2e/secret.txt',
    '/ui/%252e%252e/secret.txt',
    '/ui/link.txt',
    '/ui/.env',
    '/ui/%00index.html',
  ])('ATTACK: %s is refused', async (path) => {
    const answer = await rawExchange(
      target.url,
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).not.toContain(SECRET);
  });

  it('no path that leaves the folder names a file', () => {
    expect(uiFileOf('/ui/')).toBe('index.html');
    expect(uiFileOf('/ui/icons/logo.svg')).toBe('icons/logo.svg');
    expect(uiFileOf('/ui/a%20b.js')).toBe('a b.js');
    for (const path of ['/ui/..', '/ui/a/../../x', '/ui/%2e%2e', '/ui/a%2fb', '/ui/a%5cb', '/ui/%E0%A4%A', '/ui/a//b'])
      expect(uiFileOf(path), path).toBeUndefined();
  });
});

describe('an engine without a built dashboard', () => {
  it('answers 404 saying to run npm run build', async () => {
    const bare = await startTestApp({ uiDir: join(folder.dir, 'no-such-folder') });
    try {
      const answer = await call(bare.url, 'GET', '/ui/', { key: null });
      expect(answer.status).toBe(404);
      expect(answer.body.error.message).toContain('npm run build');
      expect(answer.headers.get('content-security-policy')).toBe(UI_CONTENT_SECURITY_POLICY);
    } finally {
      await bare.close();
    }
  });
});

/** A GET whose answer is read as bytes, undecoded (fetch would undo the compression). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
