/**
 * Which Docker daemon DOCKER_HOST names, and how it is reached, as the docker CLI reads it:
 * `unix:///path` (the default /var/run/docker.sock), or `tcp://host:port` over TLS only: a daemon's
 * API is root on its host, so it is never spoken to in clear. TLS takes DOCKER_TLS_VERIFY=1 and the
 * client certificate in DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem; default ~/.docker), and
 * verifies the daemon's certificate against ca.pem. `ssh://` is not supported: forward the remote
 * socket (ssh -L /tmp/docker.sock:/var/run/docker.sock host) and use unix:///tmp/docker.sock.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

/** The daemon cannot be reached at all (not running, wrong DOCKER_HOST, no permission). */
export class DockerUnavailableError extends Error {
  override readonly name = 'DockerUnavailableError';
}

/** The files of a TLS client: the CA that signed the daemon's certificate, and this client's certificate and key. */
export interface DockerTlsFiles {
  ca: string;
  cert: string;
  key: string;
}

export type DockerTarget = { socketPath: string } | { origin: string; tls: DockerTlsFiles };

/** Where DOCKER_HOST points: a socket path, or an https origin with the TLS files to use. Pure. */
export function dockerTarget(env: Record<string, string | undefined>): DockerTarget {
  const host = env.DOCKER_HOST;
  if (host === undefined || host === '') return { socketPath: DEFAULT_DOCKER_SOCKET };
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  if (host.startsWith('tcp://')) {
    const verify = env.DOCKER_TLS_VERIFY;
    if (verify === undefined || verify === '' || verify === '0' || verify.toLowerCase() === 'false') {
      throw new DockerUnavailableError(
        `DOCKER_HOST=${host} needs TLS: set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to a folder with ca.pem, cert.pem and key.pem ` +
          '(the Docker API gives root on its host, so it is not used in clear), or use a unix:// socket',
      );
    }
    const dir =
      env.DOCKER_CERT_PATH !== undefined && env.DOCKER_CERT_PATH !== ''
        ? env.DOCKER_CERT_PATH
        : join(env.HOME ?? homedir(), '.docker');
    return {
      origin: `https://${host.slice('tcp://'.length).replace(/\/+$/, '')}`,
      tls: { ca: join(dir, 'ca.pem'), cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') },
    };
  }
  if (host.startsWith('ssh://')) {
    throw new DockerUnavailableError(
      `DOCKER_HOST=${host}: ssh:// is not supported; forward the daemon's socket (ssh -NL /tmp/docker.sock:/var/run/docker.sock ${host.slice('ssh://'.length)}) ` +
        'and set DOCKER_HOST=unix:///tmp/docker.sock, or use tcp:// with TLS (DOCKER_TLS_VERIFY=1, DOCKER_CERT_PATH)',
    );
  }
  throw new DockerUnavailableError(
    `DOCKER_HOST=${host} is not supported: use unix:///path/to/docker.sock, or tcp://host:port with DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH`,
  );
}

/** The contents of the TLS files, for undici's connect options; names the file that cannot be read. */
export function readTlsFiles(files: DockerTlsFiles): { ca: Buffer; cert: Buffer; key: Buffer } {
  const read = (name: string, path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (error) {
      throw new DockerUnavailableError(
        `cannot read ${name} of the Docker TLS client at ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}): set DOCKER_CERT_PATH to the folder holding ca.pem, cert.pem and key.pem`,
      );
    }
  };
  return { ca: read('ca.pem', files.ca), cert: read('cert.pem', files.cert), key: read('key.pem', files.key) };
}
