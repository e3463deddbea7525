/**
 * Where a definition renders `{{...}}` templates, and whether each reference resolves there: tool
 * arguments the inputSchema declares, prompt arguments, URI template variables, `{{user.id}}` only
 * in per-user resources. Pure.
 */
import { parseTemplateRefs } from './template.js';
import { parseUriTemplate } from './uri-template.js';
import { asArray, asRecord, asString, items, strings, type CheckContext, type Path, type Rec } from './walk.js';

type FieldScope = 'tool' | 'resource' | 'prompt';
interface TemplateField {
  path: Path;
  text: string;
  scope: FieldScope;
  /** the tool, resource or prompt the field belongs to */
  owner: Rec;
}

/** Every field whose text is rendered with `{{...}}` at runtime. */
export function listTemplateFields(def: Rec): TemplateField[] {
  const fields: TemplateField[] = [];
  const push = (scope: FieldScope, owner: Rec, value: unknown, path: Path) => {
    for (const [p, text] of strings(value, path)) fields.push({ path: p, text, scope, owner });
  };
  const content = (scope: FieldScope, owner: Rec, item: unknown, path: Path) => {
    if (typeof item === 'string') return push(scope, owner, item, path);
    const record = asRecord(item);
    if (record?.type === 'text' || record?.type === 'resource') push(scope, owner, record.text, [...path, 'text']);
    if (record?.type === 'json') push(scope, owner, record.json, [...path, 'json']);
  };
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    const base: Path = ['tools', i, 'handler'];
    if (handler?.type === 'static')
      asArray(handler.content).forEach((c, j) => content('tool', tool, c, [...base, 'content', j]));
    if (handler?.type === 'error') push('tool', tool, handler.message, [...base, 'message']);
    if (handler?.type === 'http') {
      push('tool', tool, handler.url, [...base, 'url']);
      push('tool', tool, handler.headers, [...base, 'headers']);
      push('tool', tool, handler.body, [...base, 'body']);
    }
  }
  for (const [i, resource] of items(def.resources)) {
    const source = asRecord(resource.source);
    const base: Path = ['resources', i, 'source'];
    if (source?.type === 'text') push('resource', resource, source.text, [...base, 'text']);
    if (source?.type === 'file') push('resource', resource, source.path, [...base, 'path']);
    if (source?.type === 'url') {
      push('resource', resource, source.url, [...base, 'url']);
      push('resource', resource, source.headers, [...base, 'headers']);
    }
  }
  for (const [i, prompt] of items(def.prompts)) {
    for (const [j, message] of items(prompt.messages))
      content('prompt', prompt, message.content, ['prompts', i, 'messages', j, 'content']);
  }
  return fields;
}

/** Argument names a tool's inputSchema declares, or undefined when it accepts more than it lists. */
function declaredToolArgs(tool: Rec): Set<string> | undefined {
  const schema = asRecord(tool.inputSchema);
  if (schema === undefined) return new Set();
  const open = [
    'additionalProperties',
    'patternProperties',
    'allOf',
    'anyOf',
    'oneOf',
    '$ref',
    'unevaluatedProperties',
  ].some((k) => schema[k] !== undefined && schema[k] !== false);
  return open ? undefined : new Set(Object.keys(asRecord(schema.properties) ?? {}));
}

export function checkTemplateRefs({ def, error, warn }: CheckContext): void {
  const usesUser = new Set<Rec>();
  for (const field of listTemplateFields(def)) {
    if (!field.text.includes('{{')) continue;
    const { refs, errors } = parseTemplateRefs(field.text);
    for (const message of errors) error(field.path, message);
    for (const ref of refs) {
      if (ref.root === 'args' && field.scope === 'resource') {
        error(field.path, `resources have no arguments: use {{params.NAME}} for URI template variables`);
      } else if (ref.root === 'args' && ref.name !== undefined && field.scope === 'tool') {
        const declared = declaredToolArgs(field.owner);
        if (declared !== undefined && !declared.has(ref.name)) {
          error(field.path, `{{args.${ref.name}}} is not a property of this tool's inputSchema`);
        }
      } else if (ref.root === 'args' && ref.name !== undefined && field.scope === 'prompt') {
        const declared = new Set(items(field.owner.arguments).map(([, a]) => asString(a.name)));
        if (!declared.has(ref.name))
          error(field.path, `{{args.${ref.name}}} is not a declared argument of this prompt`);
      } else if (ref.root === 'params') {
        if (field.scope !== 'resource') {
          error(field.path, `{{params.${ref.name}}} is only available in resource sources`);
          continue;
        }
        const parsed = parseUriTemplate(asString(field.owner.uri) ?? '');
        if ('error' in parsed) continue; // the uri itself is reported
        const variables = parsed.variables;
        if (!variables.includes(ref.name)) {
          error(
            field.path,
            variables.length === 0
              ? `{{params.${ref.name}}} needs a URI template variable, such as ${asString(field.owner.uri) ?? 'notes://'}/{${ref.name}}`
              : `{{params.${ref.name}}} is not a variable of the URI template (${variables.join(', ')})`,
          );
        }
      } else if (ref.root === 'user' && field.scope === 'resource') {
        usesUser.add(field.owner);
        if (field.owner.per_user !== true) error(field.path, '{{user.id}} in a resource needs per_user: true');
      }
    }
  }
  for (const [i, resource] of items(def.resources)) {
    if (resource.per_user === true && resource.source !== undefined && !usesUser.has(resource)) {
      warn(
        ['resources', i, 'per_user'],
        'per_user is set but the source never uses {{user.id}}: every user sees the same content',
      );
    }
  }
}
