/**
 * Semantic checks of `egress`: entries of `allow` that name what no server ever reaches (a cloud
 * metadata service, a link-local address), entries `allow_private` already covers, and an
 * `egress` section with nothing to apply to (no `http` handler and no `url` resource). Warnings
 * only: the runtime refuses the same targets whatever the definition says. Pure.
 */
import { classifyAddress, isForbidden, isMetadataName } from '../shared/ip-address.js';
import { asArray, asRecord, asString, items, type CheckContext } from './walk.js';

export function checkEgress({ def, warn }: CheckContext): void {
  const egress = asRecord(def.egress);
  if (egress === undefined) return;
  const reaches =
    items(def.tools).some(([, tool]) => asRecord(tool.handler)?.type === 'http') ||
    items(def.resources).some(([, resource]) => asRecord(resource.source)?.type === 'url');
  if (!reaches) warn(['egress'], 'no http handler or url resource calls out, so egress has nothing to apply to');
  asArray(egress.allow).forEach((value, i) => {
    const entry = asString(value);
    if (entry === undefined) return;
    const host = hostOf(entry);
    const kind = classifyAddress(host);
    if (isMetadataName(host) || (kind !== undefined && isForbidden(kind))) {
      warn(
        ['egress', 'allow', i],
        `${entry} is never reached: link-local, metadata, multicast and reserved addresses are refused whatever egress allows`,
      );
    } else if (kind === 'public') {
      warn(
        ['egress', 'allow', i],
        `${entry} is a public address, reachable without being listed: allow is for private and loopback addresses`,
      );
    } else if (egress.allow_private === true) {
      warn(['egress', 'allow', i], `allow_private: true already allows ${entry}`);
    }
  });
}

/** `host:port` → host, `[v6]:port` → v6. */
function hostOf(entry: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(entry);
  if (bracketed !== null) return bracketed[1]!;
  return entry.replace(/:\d+$/, '');
}
