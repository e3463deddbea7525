/**
 * Which addresses `mcpctl dev` may listen on. A dev server runs every tool with the developer's
 * own environment (variables, files, credentials) and usually without auth: on an address other
 * machines reach, anyone on the network could call it. So only loopback, unless --allow-remote.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { UserError } from '../../shared/errors.js';

/** True for addresses only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const address = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (address === 'localhost') return true;
  if (isIPv4(address)) return address.startsWith('127.');
  if (isIPv6(address)) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address)?.[1];
    if (mapped !== undefined) return mapped.startsWith('127.');
    return /^(0{0,4}:){1,7}0{0,3}1$/.test(address) || address === '::1';
  }
  return false;
}

/**
 * Refuses a non-loopback --host without --allow-remote, before anything is built or bound; with
 * it, the warning to print. Undefined for a loopback address.
 */
export function checkDevHost(host: string, allowRemote: boolean, shown: string): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  const exposure = `every tool of ${shown}, running with your whole environment (its variables, your files and credentials), to anyone who can reach ${host} on the network`;
  if (!allowRemote) {
    throw new UserError(`--host ${host} would serve ${exposure}`, {
      code: 'remote_dev_refused',
      hint: 'keep the default --host 127.0.0.1 for clients on this machine; to serve others on a network you trust, add --allow-remote; to expose it for real, deploy it (`mcpctl deploy`), where auth and isolation apply',
    });
  }
  return `--allow-remote: serving ${exposure}; stop it (Ctrl-C) when you are done`;
}
