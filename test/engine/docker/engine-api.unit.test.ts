import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { dockerTarget, DockerUnavailableError, readLogLines, readProgress } from '../../../src/engine/docker/engine-api.js';

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
    expect(dockerTarget({ DOCKER_HOST: 'tcp://10.0.0.5:2375' })).toEqual({ origin: 'http://10.0.0.5:2375' });
    expect(() => dockerTarget({ DOCKER_HOST: 'ssh://me@host' })).toThrow(DockerUnavailableError);
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
    const failed = ['{"stream":"Step 1/2 : FROM nowhere\\n"}\n{"errorDetail":{"message":"pull access denied for nowhere"},"error":"pull access denied"}\n'];
    await expect(readProgress(Readable.from(failed))).rejects.toThrow('pull access denied for nowhere');
  });
});
