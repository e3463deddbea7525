/**
 * Which MCP client a request comes from when it names no session: a server without sessions
 * (the default) answers each request on its own, so the `clientInfo` of an `initialize` is
 * remembered for the client's connection to the gateway, per deployment, and later requests on
 * that connection count for it (usage figures only, never a decision). Forgotten with the
 * connection. A request of a session counts for the session's client instead (session-table.ts).
 */
export interface ClientInfo {
  name: string;
  version?: string;
}

const byConnection = new WeakMap<object, Map<string, ClientInfo>>();

/** The client of a request on `connection` to `deploymentId`: the one it names, else the last one named there. */
export function connectionClient(
  connection: object,
  deploymentId: string,
  named: ClientInfo | undefined,
): ClientInfo | undefined {
  let clients = byConnection.get(connection);
  if (named === undefined) return clients?.get(deploymentId);
  if (clients === undefined) byConnection.set(connection, (clients = new Map<string, ClientInfo>()));
  clients.set(deploymentId, named);
  return named;
}
