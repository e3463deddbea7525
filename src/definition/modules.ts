/**
 * The code a definition brings of its own (TypeScript and JavaScript modules), read the way a
 * build treats it. One compile serves both sides: a bundle writes what `transpileSource` gives,
 * and `validate` reports the same syntax errors at file:line:column, offline, before anything is
 * sent. `typescript` is loaded only when a definition has modules.
 */
import type TypeScript from 'typescript';
import { compiledModulePath, isTypeScriptSource } from './module-path.js';

export interface SourceProblem {
  /** the file, relative to the definition folder */
  file: string;
  line?: number;
  column?: number;
  message: string;
}

let loaded: typeof TypeScript | undefined;
async function typescript(): Promise<typeof TypeScript> {
  loaded ??= (await import('typescript')).default;
  return loaded;
}

/**
 * Strips the types of a TypeScript source as a bundle does (no type checking), or only parses a
 * JavaScript one: the JavaScript out and the syntax errors, each with its line and column.
 */
export async function transpileSource(
  path: string,
  source: string,
): Promise<{ outputText: string; problems: SourceProblem[] }> {
  const ts = await typescript();
  const result = ts.transpileModule(source, {
    fileName: path,
    reportDiagnostics: true,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: /\.c[jt]s$/.test(path) ? ts.ModuleKind.CommonJS : ts.ModuleKind.ESNext,
      // `./helpers.ts` in an import becomes `./helpers.js`, the file compiled beside it
      rewriteRelativeImportExtensions: true,
      esModuleInterop: true,
      inlineSourceMap: true,
      inlineSources: true,
    },
  });
  const problems = (result.diagnostics ?? []).map((diagnostic): SourceProblem => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file === undefined || diagnostic.start === undefined) return { file: path, message };
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return { file: path, line: line + 1, column: character + 1, message };
  });
  return { outputText: result.outputText, problems };
}

/**
 * The names a module exports, read from its text: `export function f`, `export const f`,
 * `export { f as g }`, and the keys of an `export default { … }` object (the runtime looks there
 * too). Undefined when its text cannot say: `export *`, a default that is not an object literal,
 * or no ES export at all (CommonJS).
 */
export async function exportedNames(path: string, source: string): Promise<Set<string> | undefined> {
  const ts = await typescript();
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.ES2022, false);
  const names = new Set<string>();
  let known = true;
  let esm = false;
  const isExported = (node: TypeScript.Node): boolean =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const isDefault = (node: TypeScript.Node): boolean =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
  for (const statement of file.statements) {
    if (ts.isExportDeclaration(statement)) {
      esm = true;
      if (statement.exportClause === undefined || !ts.isNamedExports(statement.exportClause)) known = false;
      else for (const element of statement.exportClause.elements) names.add(element.name.text);
    } else if (ts.isExportAssignment(statement)) {
      esm = true;
      if (statement.isExportEquals === true || !ts.isObjectLiteralExpression(statement.expression)) known = false;
      else {
        for (const property of statement.expression.properties) {
          const name = property.name;
          if (name !== undefined && (ts.isIdentifier(name) || ts.isStringLiteral(name))) names.add(name.text);
          else known = false;
        }
      }
    } else if (isExported(statement)) {
      esm = true;
      if (isDefault(statement)) continue;
      if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name !== undefined)
        names.add(statement.name.text);
      else if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) names.add(declaration.name.text);
          else known = false;
        }
      }
    }
  }
  return esm && known ? names : undefined;
}

/** What to check in the files a build ships: every TypeScript file, and the JavaScript a module loads. */
export function sourcesToCheck(paths: Iterable<string>, moduleFiles: ReadonlySet<string>): string[] {
  return [...paths].filter((path) => isTypeScriptSource(path) || (moduleFiles.has(path) && /\.(m|c)?js$/.test(path)));
}

/** A TypeScript file whose JavaScript name is taken by another shipped file: the bundle could not write both. */
export function compiledNameClash(path: string, shipped: ReadonlySet<string>): string | undefined {
  if (!isTypeScriptSource(path)) return undefined;
  const output = compiledModulePath(path);
  return shipped.has(output) ? `${output} exists too, and ${path} compiles to it; keep only one of them` : undefined;
}
