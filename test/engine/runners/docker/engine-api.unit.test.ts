import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  createDockerClient,
  dockerTarget,
  DockerUnavailableError,
  readLogLines,
  readProgress,
} from '../../../../src/engine/runners/docker/engine-api.js';

function frame(stream: 1 | 2, text: string): Buffer {
  const body = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

describe('the Docker Engine API client', () => {
  it('reads DOCKER_HOST as the docker CLI does', () => {
    expect(dockerTarget({})).toEqual({ socketPath: '/var/run/docker.sock' });
    expect(dockerTarget({ DOCKER_HOST: 'unix:///tmp/d/docker.sock' })).toEqual({ socketPath: '/tmp/d/docker.sock' });
    expect(
      dockerTarget({ DOCKER_HOST: 'tcp://10.0.0.5:2376', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/certs' }),
    ).toEqual({
      origin: 'https://10.0.0.5:2376',
      tls: { ca: '/certs/ca.pem', cert: '/certs/cert.pem', key: '/certs/key.pem' },
    });
    expect(dockerTarget({ DOCKER_HOST: 'tcp://d:2376', DOCKER_TLS_VERIFY: '1', HOME: '/home/me' })).toMatchObject({
      tls: { ca: '/home/me/.docker/ca.pem' },
    });
  });

  it('refuses tcp:// without TLS, naming the variables that turn it on (ATTACK: the daemon API in clear)', () => {
    for (const env of [
      { DOCKER_HOST: 'tcp://10.0.0.5:2375' },
      { DOCKER_HOST: 'tcp://10.0.0.5:2375', DOCKER_TLS_VERIFY: '0' },
    ]) {
      expect(() => dockerTarget(env)).toThrow(DockerUnavailableError);
      expect(() => dockerTarget(env)).toThrow(/DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH/);
    }
  });

  it('says ssh:// is not supported, and how to reach such a daemon instead', () => {
    expect(() => dockerTarget({ DOCKER_HOST: 'ssh://me@host' })).toThrow(DockerUnavailableError);
    expect(() => dockerTarget({ DOCKER_HOST: 'ssh://me@host' })).toThrow(
      /ssh:\/\/ is not supported.*ssh -NL \/tmp\/docker.sock:\/var\/run\/docker.sock me@host/,
    );
  });

  it('names the TLS file it cannot read', () => {
    expect(() =>
      createDockerClient({
        DOCKER_HOST: 'tcp://127.0.0.1:2376',
        DOCKER_TLS_VERIFY: '1',
        DOCKER_CERT_PATH: '/nonexistent-certs',
      }),
    ).toThrow(/ca\.pem .* \/nonexistent-certs\/ca\.pem \(ENOENT\)/);
  });

  it('splits a multiplexed log stream into lines, frames cut anywhere', async () => {
    const whole = Buffer.concat([frame(1, '{"level":"info"}\npart'), frame(2, 'oops\n'), frame(1, 'ial\nlast')]);
    const chunks = [whole.subarray(0, 5), whole.subarray(5, 30), whole.subarray(30)];
    const lines: string[] = [];
    await readLogLines(Readable.from(chunks), (line, from) => lines.push(`${from}: ${line}`));
    expect(lines).toEqual(['stdout: {"level":"info"}', 'stderr: oops', 'stdout: partial', 'stdout: last']);
  });

  it('reads build progress, and fails with the error the daemon reported', async () => {
    const ok = ['{"stream":"Step 1/2 : FROM base\\n"}\n', '{"stream":"Successfully built 1234\\n"}\n'];
    expect(await readProgress(Readable.from(ok))).toEqual(['Step 1/2 : FROM base', 'Successfully built 1234']);
    const failed = [
      '{"stream":"Step 1/2 : FROM nowhere\\n"}\n{"errorDetail":{"message":"pull access denied for nowhere"},"error":"pull access denied"}\n',
    ];
    await expect(readProgress(Readable.from(failed))).rejects.toThrow('pull access denied for nowhere');
  });
});
