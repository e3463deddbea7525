/**
 * A private certificate authority for HTTPS tests, made with the `openssl` command (.ci/run installs
 * it when missing): its certificate (`caFile`, for a client's `ca` or NODE_EXTRA_CA_CERTS), and
 * server certificates it issues for the names a test asks for. EC P-256 keys, valid two days.
 */
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface TestCa {
  caFile: string;
  /** the CA certificate as PEM */
  ca: string;
  /** a certificate for `names` (the first is its common name) signed by the CA, as files `<dir>/<file>.pem` and `.key` */
  issue(file: string, names: string[], options?: { dir?: string }): Promise<{ cert: string; key: string }>;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export async function createTestCa(dir: string): Promise<TestCa> {
  openssl(
    [
      'req',
      '-x509',
      ...KEY,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=mcpctl test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  const ca = await readFile(join(dir, 'ca.pem'), 'utf8');
  let serial = 0;
  return {
    caFile: join(dir, 'ca.pem'),
    ca,
    async issue(file, names, options = {}) {
      const out = options.dir ?? dir;
      serial += 1;
      const ext = join(dir, `${file}-${serial}.ext`);
      await writeFile(
        ext,
        [
          `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}`,
          'basicConstraints=CA:FALSE',
          'keyUsage=critical,digitalSignature',
          'extendedKeyUsage=serverAuth',
        ].join('\n'),
      );
      const cert = join(out, `${file}.pem`);
      const key = join(out, `${file}.key`);
      const csr = join(dir, `${file}-${serial}.csr`);
      openssl(['req', ...KEY, '-keyout', key, '-out', csr, '-subj', `/CN=${names[0]}`], dir);
      openssl(
        [
          'x509',
          '-req',
          '-in',
          csr,
          '-CA',
          'ca.pem',
          '-CAkey',
          'ca.key',
          '-set_serial',
          String(1000 + serial),
          '-out',
          cert,
          '-days',
          '2',
          '-extfile',
          ext,
        ],
        dir,
      );
      return { cert, key };
    },
  };
}
