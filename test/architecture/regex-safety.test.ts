/**
 * Every regular expression in runtime/ and generator/, found with the TypeScript compiler (regex
 * literals, and `RegExp(...)` whose source is a literal or a template of constants), checked
 * with recheck for backtracking that grows faster than the input (ReDoS): one such pattern on a
 * request path stalls every tenant (issue 38). A pattern recheck reports is fixed, or listed in
 * ALLOWED with why it must stay; a `RegExp` built from what the compiler cannot resolve is
 * listed in DYNAMIC with why its source is safe. HL7's primitive patterns, compiled at run time
 * from generated/, are checked as the validator compiles them.
 * @see https://makenowjust-labs.github.io/recheck/
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkSync } from 'recheck';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { loadDefinitionRegistry } from '../../generated/definitions/index.js';
import { compilePattern } from '../../runtime/validation/primitive-value.js';

/** Patterns recheck reports that must stay, by `file /source/flags`, with the reason. */
const ALLOWED: Readonly<Record<string, string>> = {};

/** HL7 primitives whose pattern the validator replaces by a linear check (primitive-value.ts). */
const REPLACED: Readonly<Record<string, string>> = {
  base64Binary: 'nested `\\s*` under `+`: exponential; isBase64Binary checks the same in one pass',
};

/** `RegExp`s built from values the compiler cannot resolve, by file, with why they are safe. */
const DYNAMIC: Readonly<Record<string, string>> = {
  'runtime/bots/bot-preludes.ts':
    'one alternation of fixed identifier names between \\b anchors: no quantifier over a group',
  'runtime/validation/primitive-value.ts':
    "HL7's primitive patterns from generated/, each checked below as compilePattern compiles it",
  'generator/ir/search-expression.ts':
    '`^(\\(*)Type\\b` with a FHIR type name from spec/: one quantifier, and never user input',
};

interface Pattern {
  readonly where: string;
  readonly source: string;
  readonly flags: string;
}

const ROOTS = ['runtime', 'generator'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The string an expression always has: a literal, or a const (imported too) built of them. */
function constantString(node: ts.Expression, checker: ts.TypeChecker): string | undefined {
  if (ts.isStringLiteralLike(node)) return node.text;
  if (ts.isParenthesizedExpression(node)) return constantString(node.expression, checker);
  if (ts.isTemplateExpression(node)) {
    let text = node.head.text;
    for (const span of node.templateSpans) {
      const part = constantString(span.expression, checker);
      if (part === undefined) return undefined;
      text += part + span.literal.text;
    }
    return text;
  }
  const type = checker.getTypeAtLocation(node);
  if (type.isStringLiteral()) return type.value;
  if (!ts.isIdentifier(node)) return undefined;
  let symbol = checker.getSymbolAtLocation(node);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const declaration = symbol?.valueDeclaration;
  if (!declaration || !ts.isVariableDeclaration(declaration) || !declaration.initializer)
    return undefined;
  if (!(ts.getCombinedNodeFlags(declaration) & ts.NodeFlags.Const)) return undefined;
  return constantString(declaration.initializer, checker);
}

/** Every pattern of runtime/ and generator/, and the files with a RegExp built otherwise. */
function findPatterns(): { patterns: Pattern[]; dynamic: Map<string, string[]> } {
  const files = ROOTS.flatMap(sourceFiles);
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noResolve: false,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const patterns: Pattern[] = [];
  const dynamic = new Map<string, string[]>();
  for (const file of files) {
    const sourceFile = program.getSourceFile(file)!;
    const at = (node: ts.Node) =>
      `${file}:${sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const text = node.getText();
        const end = text.lastIndexOf('/');
        patterns.push({ where: at(node), source: text.slice(1, end), flags: text.slice(end + 1) });
      } else if (
        (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
        ts.isIdentifier(node.expression) &&
        node.expression.text === 'RegExp' &&
        node.arguments?.length
      ) {
        const [sourceArgument, flagsArgument] = node.arguments;
        const source = constantString(sourceArgument, checker);
        const flags = flagsArgument ? constantString(flagsArgument, checker) : '';
        if (source !== undefined && flags !== undefined)
          patterns.push({ where: at(node), source, flags });
        else dynamic.set(file, [...(dynamic.get(file) ?? []), at(node)]);
      }
      ts.forEachChild(node, visit);
    };
    visit(sourceFile);
  }
  return { patterns, dynamic };
}

/** recheck's verdict, unless the pattern is safe: `vulnerable (polynomial)` and an attack. */
function verdict({ source, flags }: Pattern): string | undefined {
  const diagnostics = checkSync(source, flags);
  if (diagnostics.status === 'safe') return undefined;
  if (diagnostics.status === 'vulnerable')
    return `vulnerable (${diagnostics.complexity.type}): ${diagnostics.attack.pattern}`;
  return `${diagnostics.status}: ${diagnostics.error.kind}`;
}

describe('regular expressions', () => {
  const { patterns, dynamic } = findPatterns();

  it('finds the patterns of runtime/ and generator/', () => {
    expect(patterns.length).toBeGreaterThan(100);
    expect(patterns).toContainEqual(
      expect.objectContaining({ source: '^Bot\\/([A-Za-z0-9\\-.]{1,64})$' }),
    );
    // A template of constants, one of them imported.
    expect(patterns).toContainEqual(
      expect.objectContaining({ source: '^/fhir/R4(?:/[^/]+/[^/]+)?/\\$graphql$' }),
    );
  });

  it('has no pattern that backtracks without bound, but those ALLOWED', () => {
    const reported = patterns.flatMap((pattern) => {
      const problem = verdict(pattern);
      const key = `${pattern.where.replace(/:\d+$/, '')} /${pattern.source}/${pattern.flags}`;
      return problem && !(key in ALLOWED)
        ? [`${pattern.where} /${pattern.source}/: ${problem}`]
        : [];
    });
    expect(reported).toEqual([]);
  }, 300_000);

  it('builds a RegExp from an unresolved value only where DYNAMIC says why that is safe', () => {
    expect([...dynamic.keys()].sort()).toEqual(Object.keys(DYNAMIC).sort());
  });

  it("compiles HL7's primitive patterns into patterns that cannot backtrack without bound", () => {
    const primitives = Object.values(loadDefinitionRegistry().primitives);
    const checked = primitives.filter((p) => p.pattern !== undefined && !(p.name in REPLACED));
    expect(checked.length).toBeGreaterThan(10);
    const reported = checked.flatMap(({ name, pattern }) => {
      const { source } = compilePattern(pattern!);
      const problem = verdict({ where: name, source, flags: '' });
      return problem ? [`${name} /${source}/: ${problem}`] : [];
    });
    expect(reported).toEqual([]);
  }, 300_000);
});
