/**
 * Resource URI templates (RFC 6570: `{var}`, `{+var}`, `{?a,b}`, `{var*}`, `{var:3}`), read by the
 * SDK's `UriTemplate`: the parser the runtime serves resources with. The checker adds the rules the
 * SDK leaves open (braces that pair, variable names, each variable once), so what `validate`
 * accepts is what the server will match. Pure. The SDK is large next to the rest of `validate`, so it
 * is loaded the first time a URI actually holds a brace, not when this module is imported.
 */
import { createRequire } from 'node:module';
import type { UriTemplate as SdkUriTemplate } from '@modelcontextprotocol/server';
import { asString, items, type CheckContext } from './walk.js';

let uriTemplateClass: typeof SdkUriTemplate | undefined;
function UriTemplate(): typeof SdkUriTemplate {
  uriTemplateClass ??= (
    createRequire(import.meta.url)('@modelcontextprotocol/server') as { UriTemplate: typeof SdkUriTemplate }
  ).UriTemplate;
  return uriTemplateClass;
}

// a variable name with an optional prefix modifier (`:3`); the SDK has already taken off `*`
const URI_VARSPEC = /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*(:[1-9][0-9]{0,3})?$/;

/** The variables of a URI template, or the reason it is malformed. */
export function parseUriTemplate(uri: string): { variables: string[] } | { error: string } {
  // no brace at all: a plain URI, with no variables and nothing the SDK could refuse
  if (!uri.includes('{') && !uri.includes('}')) return { variables: [] };
  let names: string[];
  try {
    names = new (UriTemplate())(uri).variableNames;
  } catch {
    return { error: 'has a { without a matching }' };
  }
  if (names.some((spec) => spec.includes('{')))
    return { error: 'has a nested {: URI templates use single braces, such as notes://{id}' };
  if (uri.split('}').length !== uri.split('{').length) return { error: 'has a } without a matching {' };
  if (/\{[+#./?&]?\}/.test(uri)) return { error: 'has an empty expression {}' };
  const variables: string[] = [];
  for (const spec of names) {
    if (!URI_VARSPEC.test(spec)) return { error: `has an invalid variable "${spec}" (letters, digits and _ only)` };
    const name = spec.replace(/:\d+$/, '');
    if (variables.includes(name)) return { error: `uses the variable "${name}" twice` };
    variables.push(name);
  }
  return { variables };
}

/** True when `uri` is `template` itself or one of the URIs the template serves. */
export function matchesUriTemplate(template: string, uri: string): boolean {
  if (template === uri) return true;
  if (!template.includes('{')) return false;
  const Template = UriTemplate();
  if (!Template.isTemplate(template) || 'error' in parseUriTemplate(template)) return false;
  return new Template(template).match(uri) !== null;
}

export function checkUriTemplates({ def, error }: CheckContext): void {
  for (const [i, resource] of items(def.resources)) {
    const uri = asString(resource.uri);
    if (uri === undefined) continue;
    const parsed = parseUriTemplate(uri);
    if ('error' in parsed) error(['resources', i, 'uri'], `URI template ${parsed.error}`);
  }
}
