/**
 * The NetworkPolicy of an exported server: default deny for its pods, then only what it needs.
 *
 * - in: TCP to the server's port, from the Ingress controller's namespace when an Ingress routes
 *   to it (a domain), else from the pods of its own namespace;
 * - out: DNS (port 53, to any address: cluster DNS or a node-local cache), and what the
 *   definition's `egress` allows, as the runtime reads it: public addresses always; private and
 *   loopback ranges only with `allow_private`, or the IP addresses named in `allow` (a host name
 *   cannot be written in a NetworkPolicy: a notice says so); link-local and metadata addresses
 *   (169.254.0.0/16, fe80::/10) never.
 *
 * Each rule is one entry of `egressRules`, so another kind of egress is one more entry. Pure: no IO.
 */
import { isIP } from 'node:net';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { INetworkPolicyEgressRule } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyEgressRule';
import type { INetworkPolicyIngressRule } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyIngressRule';
import type { INetworkPolicyPort } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPort';

/** The definition's top-level `egress`. */
export interface EgressSettings {
  allow_private?: boolean;
  allow?: string[];
}

/** The namespace most Ingress controllers (ingress-nginx) run in. */
export const DEFAULT_INGRESS_NAMESPACE = 'ingress-nginx';
/** Where the Prometheus Operator's stack usually runs (kube-prometheus, its Helm chart's examples). */
export const DEFAULT_MONITORING_NAMESPACE = 'monitoring';
/** Never reachable: link-local, where clouds answer with instance credentials (169.254.169.254). */
export const LINK_LOCAL = { v4: '169.254.0.0/16', v6: 'fe80::/10' } as const;
/** Reachable only with `allow_private` (or an `allow` entry): the private and loopback ranges of `egress`. */
export const PRIVATE_RANGES = {
  v4: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '127.0.0.0/8'],
  v6: ['fc00::/7', '::1/128'],
} as const;

export interface NetworkPolicyInput {
  metadata: NonNullable<INetworkPolicy['metadata']>;
  /** the pods' selector (the Deployment's) */
  selector: Record<string, string>;
  /** the container port the server listens on */
  port: number;
  /** the container port of its /metrics, let in from the monitoring namespace only */
  metricsPort?: number;
  monitoringNamespace?: string;
  /** an Ingress routes to the pods: let in its controller's namespace, not the pods of its own */
  ingress: boolean;
  ingressNamespace?: string;
  egress?: EgressSettings;
}

export function networkPolicy(input: NetworkPolicyInput): { policy: INetworkPolicy; notices: string[] } {
  const notices: string[] = [];
  const ingressNamespace = input.ingressNamespace ?? DEFAULT_INGRESS_NAMESPACE;
  const from = input.ingress
    ? [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ingressNamespace } } }]
    : [{ podSelector: {} }];
  if (input.ingress) {
    notices.push(
      `the NetworkPolicy ${input.metadata.name} lets in only the namespace ${ingressNamespace} (the Ingress controller's): edit it if your controller runs elsewhere`,
    );
  }
  const policy: INetworkPolicy = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: input.metadata,
    spec: {
      podSelector: { matchLabels: input.selector },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        { from, ports: [{ protocol: 'TCP', port: input.port }] },
        ...(input.metricsPort === undefined ? [] : [metricsRule(input, notices)]),
      ],
      egress: egressRules(input.egress ?? {}, notices, input.metadata.name ?? 'of the server'),
    },
  };
  return { policy, notices };
}

/** Prometheus scraping the pods' /metrics, from the monitoring namespace. */
function metricsRule(input: NetworkPolicyInput, notices: string[]): INetworkPolicyIngressRule {
  const namespace = input.monitoringNamespace ?? DEFAULT_MONITORING_NAMESPACE;
  notices.push(
    `the NetworkPolicy ${input.metadata.name} lets Prometheus scrape port ${input.metricsPort} (/metrics) from the namespace ${namespace} only: edit it if Prometheus runs elsewhere`,
  );
  return {
    from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } }],
    ports: [{ protocol: 'TCP', port: input.metricsPort! }],
  };
}

/** The egress rules: DNS, public addresses, then what `egress` opens. */
export function egressRules(egress: EgressSettings, notices: string[], name: string): INetworkPolicyEgressRule[] {
  const dns: INetworkPolicyEgressRule = {
    ports: [
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
    ],
  };
  const closed = egress.allow_private === true ? { v4: [], v6: [] } : PRIVATE_RANGES;
  const addresses: INetworkPolicyEgressRule = {
    to: [
      { ipBlock: { cidr: '0.0.0.0/0', except: [LINK_LOCAL.v4, ...closed.v4] } },
      { ipBlock: { cidr: '::/0', except: [LINK_LOCAL.v6, ...closed.v6] } },
    ],
  };
  const rules = [dns, addresses];
  if (egress.allow_private === true) return rules;
  const names: string[] = [];
  for (const entry of egress.allow ?? []) {
    const { host, port } = splitHost(entry);
    const version = isIP(host);
    if (version === 0) {
      names.push(entry);
      continue;
    }
    if (version === 4 && host.startsWith('169.254.')) continue;
    if (version === 6 && /^fe[89ab]/i.test(host)) continue;
    const ports: INetworkPolicyPort[] | undefined = port === undefined ? undefined : [{ protocol: 'TCP', port }];
    rules.push({
      to: [{ ipBlock: { cidr: `${host}/${version === 4 ? 32 : 128}` } }],
      ...(ports === undefined ? {} : { ports }),
    });
  }
  if (names.length > 0) {
    notices.push(
      `egress.allow names ${names.join(', ')}: a NetworkPolicy cannot name hosts, so private addresses stay closed for them; add their addresses to the NetworkPolicy ${name}`,
    );
  }
  return rules;
}

function splitHost(entry: string): { host: string; port?: number } {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (v6 !== null) return { host: v6[1]!, ...(v6[2] === undefined ? {} : { port: Number(v6[2]) }) };
  const at = entry.lastIndexOf(':');
  if (at === -1) return { host: entry };
  return { host: entry.slice(0, at), port: Number(entry.slice(at + 1)) };
}
