/**
 * Resources: static URIs and URI templates (`notes://{id}`), with content from inline text, a file
 * inside the definition folder, or a URL. Per-user resources read the caller's id; `users:`
 * restricts who may list and read a resource.
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, UriTemplate } from '@modelcontextprotocol/server';
import type { CacheHint, Resource, ResourceTemplateType } from '@modelcontextprotocol/server';
import type { ResourceDefinition } from '../../definition/schema.js';
import {
  guessMimeType,
  messageOf,
  readDefinitionFile,
  toResourceContents,
  type CallContext,
  type CompileContext,
  type ResourceContents,
} from './content.js';
import { renderUrl, UrlValueError } from './egress-url.js';
import { callHttp, describeUrl, HttpCallError } from './http-call.js';
import { checkPathSegment, PathEscapeError } from './safe-path.js';
import { compileTemplate, type TemplateScope } from '../../definition/template.js';
import { resourceCacheHint } from './cache-hints.js';

export interface ResourceCompileContext extends CompileContext {
  resolveEnv(value: string, path: string): string;
  /** the server's `cache`: what a resource without its own gives its reads */
  serverCache?: ResourceDefinition['cache'];
}

type Reader = (uri: string, scope: TemplateScope, call: CallContext) => Promise<ResourceContents[]>;

interface CompiledResource {
  definition: ResourceDefinition;
  template: UriTemplate | undefined;
  /** reading needs the caller's id */
  needsUser: boolean;
  read: Reader;
  cache: CacheHint | undefined;
}

export interface ResourceSet {
  list(userId: string | undefined): Resource[];
  listTemplates(userId: string | undefined): ResourceTemplateType[];
  read(uri: string, call: CallContext): Promise<ResourceContents[]>;
  /** the caching hint of a read of this URI, if any */
  cacheOf(uri: string): CacheHint | undefined;
  /** the definition file behind a resource URI, when it is a `file` source without templates (it can be watched) */
  fileOf(uri: string): string | undefined;
  readonly count: number;
}

export const USER_ID_HINT = 'send the caller\'s id in the X-MCP-User-Id header or in params._meta["mcpctl/user_id"]';

export function compileResources(definitions: readonly ResourceDefinition[], ctx: ResourceCompileContext): ResourceSet {
  const exact = new Map<string, CompiledResource>();
  const templated: CompiledResource[] = [];
  for (const [i, definition] of definitions.entries()) {
    const where = `resources[${i}]`;
    const isTemplate = UriTemplate.isTemplate(definition.uri);
    let template: UriTemplate | undefined;
    if (isTemplate) {
      try {
        template = new UriTemplate(definition.uri);
      } catch (error) {
        ctx.problems.push({ path: `${where}.uri`, message: `not a valid URI template: ${messageOf(error)}` });
        continue;
      }
    }
    const { read, refs } = compileSource(definition, `${where}.source`, ctx);
    const needsUser = definition.per_user === true || definition.users !== undefined || refs.has('user.id');
    const cache = resourceCacheHint(definition, ctx.serverCache, needsUser);
    const compiled: CompiledResource = { definition, template, needsUser, read, cache };
    if (template === undefined) exact.set(definition.uri, compiled);
    else templated.push(compiled);
  }

  const visible = (resource: CompiledResource, userId: string | undefined): boolean =>
    resource.definition.users === undefined || (userId !== undefined && resource.definition.users.includes(userId));
  const describe = (d: ResourceDefinition) => ({
    name: d.name,
    ...(d.title === undefined ? {} : { title: d.title }),
    description: d.description,
    ...(d.mimeType === undefined ? {} : { mimeType: d.mimeType }),
    ...(d.icons === undefined ? {} : { icons: d.icons }),
  });
  const find = (uri: string): { found: CompiledResource; params: Record<string, unknown> } | undefined => {
    const found = exact.get(uri);
    if (found !== undefined) return { found, params: {} };
    for (const candidate of templated) {
      const match = candidate.template!.match(uri);
      if (match !== null) return { found: candidate, params: decodeVariables(match) };
    }
    return undefined;
  };

  return {
    count: definitions.length,
    fileOf(uri) {
      const source = exact.get(uri)?.definition.source;
      return source?.type === 'file' && !source.path.includes('{{') ? source.path : undefined;
    },
    list: (userId) =>
      [...exact.values()]
        .filter((r) => visible(r, userId))
        .map((r) => ({ uri: r.definition.uri, ...describe(r.definition) })),
    listTemplates: (userId) =>
      templated
        .filter((r) => visible(r, userId))
        .map((r) => ({ uriTemplate: r.definition.uri, ...describe(r.definition) })),
    cacheOf: (uri) => find(uri)?.found.cache,
    async read(uri, call) {
      const hit = find(uri);
      if (hit === undefined) throw new ResourceNotFoundError(uri, `Unknown resource: ${uri}`);
      const { found, params } = hit;
      const { definition } = found;
      if (found.needsUser && call.userId === undefined) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Resource ${uri} depends on the caller: ${USER_ID_HINT}`,
        );
      }
      if (definition.users !== undefined && !definition.users.includes(call.userId!)) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `User "${call.userId}" may not read ${uri}`);
      }
      return found.read(uri, { params, user: { id: call.userId }, server: ctx.server }, call);
    },
  };
}

function compileSource(
  definition: ResourceDefinition,
  where: string,
  ctx: ResourceCompileContext,
): { read: Reader; refs: Set<string> } {
  const source = definition.source;
  if (source === undefined) {
    // honest: a resource defined without a source has no content to serve
    const text = `No content is defined for ${definition.name}: its definition has no source.`;
    return { read: async (uri) => [{ uri, mimeType: 'text/plain', text }], refs: new Set() };
  }
  switch (source.type) {
    case 'text': {
      const text = compileTemplate(source.text);
      const mimeType = definition.mimeType ?? 'text/plain';
      return { read: async (uri, scope) => [{ uri, mimeType, text: text.render(scope) }], refs: new Set(text.refs) };
    }
    case 'file': {
      const path = compileTemplate(source.path);
      return {
        refs: new Set(path.refs),
        read: async (uri, scope) => {
          let file: string;
          let bytes: Buffer;
          try {
            file = path.render(scope, checkPathSegment);
            bytes = await readDefinitionFile(ctx.realDir, file);
          } catch (error) {
            if (error instanceof PathEscapeError)
              throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot read ${uri}: ${error.message}`);
            if ((error as NodeJS.ErrnoException).code === 'ENOENT')
              throw new ResourceNotFoundError(uri, `Nothing is stored for ${uri}`);
            throw new ProtocolError(ProtocolErrorCode.InternalError, `Cannot read ${uri}: ${messageOf(error)}`);
          }
          return [toResourceContents(uri, bytes, definition.mimeType ?? guessMimeType(file))];
        },
      };
    }
    case 'url': {
      const url = compileTemplate(ctx.resolveEnv(source.url, `${where}.url`));
      const headers = Object.entries(source.headers ?? {}).map(
        ([name, value]) => [name, compileTemplate(ctx.resolveEnv(value, `${where}.headers.${name}`))] as const,
      );
      const refs = new Set([...url.refs, ...headers.flatMap(([, value]) => value.refs)]);
      return {
        refs,
        read: async (uri, scope, call) => {
          let target: string;
          try {
            target = renderUrl(url, scope);
          } catch (error) {
            if (error instanceof UrlValueError)
              throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot read ${uri}: refused: ${error.message}`);
            throw error;
          }
          let response;
          try {
            response = await callHttp({
              method: 'GET',
              url: target,
              headers: Object.fromEntries(
                headers.map(([name, value]) => [name, value.render(scope).replace(/[\r\n]/g, ' ')]),
              ),
              timeoutMs: source.timeout_ms,
              maxBytes: source.max_bytes,
              signal: call.signal,
              egress: ctx.egress,
            });
          } catch (error) {
            if (error instanceof HttpCallError)
              throw new ProtocolError(ProtocolErrorCode.InternalError, `Cannot read ${uri}: ${error.message}`);
            throw error;
          }
          if (response.status >= 400) {
            throw new ProtocolError(
              ProtocolErrorCode.InternalError,
              `Cannot read ${uri}: GET ${describeUrl(target)} answered ${response.status} ${response.statusText}`,
            );
          }
          return [toResourceContents(uri, response.body, definition.mimeType ?? response.contentType)];
        },
      };
    }
  }
}

/** Template variables arrive percent-encoded, as RFC 6570 expansion wrote them. */
function decodeVariables(variables: Record<string, string | string[]>): Record<string, string | string[]> {
  const decode = (value: string): string => {
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  };
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [name, Array.isArray(value) ? value.map(decode) : decode(value)]),
  );
}
