/**
 * What a deployment's base URL (`/d/<name>`, without `/mcp`) answers: a short description, so a
 * URL the CLI printed and someone opened in a browser says what it is and where an MCP client
 * connects, instead of a 404. JSON, or a small page when the client asks for HTML. It says no more
 * than the public endpoints already do (the health endpoint, the OAuth metadata): the deployment,
 * its state, its MCP URL and which kind of credential it takes; no values of its configuration.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestOrigin } from '../../runtime/server/auth.js';
import { sendJson } from '../../shared/http.js';
import { GATEWAY_PREFIX } from './prefix.js';

/** What the gateway knows of the deployment a base URL names. */
export interface DescribedDeployment {
  deployment_id: string;
  status: string;
  server?: string | undefined;
  environment?: string | undefined;
  /** the kind of credential a client needs: bearer, oauth, or none */
  auth?: string | undefined;
}

/** The description of `/d/<name>`, as JSON or HTML; `known` undefined: no deployment has that name. */
export function answerDescription(
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  known: DescribedDeployment | undefined,
): void {
  const head = req.method === 'HEAD';
  if (known === undefined) {
    sendJson(res, 404, { error: `no deployment named ${name}` }, { headOnly: head });
    return;
  }
  const base = `${requestOrigin(req)}${GATEWAY_PREFIX}/${name}`;
  const serving = known.status === 'deployed' || known.status === 'deploying';
  const body = {
    name,
    deployment_id: known.deployment_id,
    ...(known.server === undefined ? {} : { server: known.server }),
    ...(known.environment === undefined ? {} : { environment: known.environment }),
    status: known.status,
    mcp_url: `${base}/mcp`,
    health_url: `${base}/health`,
    auth: known.auth ?? 'none',
    note: serving
      ? 'an MCP endpoint (Streamable HTTP): give mcp_url to an MCP client; a browser gets nothing useful there'
      : `this deployment is ${known.status}: its MCP URL answers 503`,
  };
  if (!wantsHtml(req)) {
    sendJson(res, 200, body, { headOnly: head });
    return;
  }
  const page = descriptionPage(body);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(page));
  res.setHeader('Cache-Control', 'no-store');
  // nothing runs on the page: it is text, and it must not run as the engine's origin
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(head ? undefined : page);
}

/** A browser asks for HTML before JSON; a client that asks for nothing in particular gets JSON. */
function wantsHtml(req: IncomingMessage): boolean {
  const accept = String(req.headers.accept ?? '');
  return /\btext\/html\b/.test(accept) && !/^\s*application\/json\b/.test(accept);
}

function descriptionPage(body: Record<string, string>): string {
  const rows = Object.entries(body)
    .filter(([key]) => key !== 'note')
    .map(([key, value]) => `<tr><th>${escapeHtml(key.replace('_', ' '))}</th><td>${escapeHtml(value)}</td></tr>`)
    .join('');
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(body.name ?? '')}</title>`,
    '<style>body{font:15px system-ui,sans-serif;margin:2em;max-width:48em}th{text-align:left;padding-right:1em}',
    'td{font-family:ui-monospace,monospace}</style></head><body>',
    `<h1>${escapeHtml(body.name ?? '')}</h1><table>${rows}</table><p>${escapeHtml(body.note ?? '')}</p>`,
    '</body></html>',
  ].join('');
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}
