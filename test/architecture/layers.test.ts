/**
 * The layering of docs/architecture.md, checked on every relative import (type-only ones too) of
 * runtime/, generated/ and generator/: each layer imports only the layers it is allowed, and no
 * two folders or files import each other, however indirectly. A failure names the edge.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

interface Layer {
  readonly name: string;
  /** Path prefixes of its files, most specific first across all layers. */
  readonly paths: readonly string[];
  /** The layers its files may import, besides their own. */
  readonly uses: readonly string[];
}

/** The server's layers, lowest first: each may import any layer listed before it. */
const SERVER_LAYERS: readonly (readonly [name: string, paths: readonly string[]])[] = [
  ['model', ['runtime/model/']],
  ['observability', ['runtime/observability/']],
  ['hl7', ['runtime/hl7/']],
  ['generated/types', ['generated/types/']],
  // Requests to the outside world for a project, under the egress policy: Node and undici only.
  ['egress', ['runtime/egress/']],
  // The generated data and its loaders: definitions, schema pieces, resolver wiring, search maps.
  [
    'generated/data',
    [
      'generated/definitions/',
      'generated/graphql/',
      'generated/resolvers/',
      'generated/search/index.ts',
    ],
  ],
  ['validation', ['runtime/validation/']],
  ['search', ['runtime/search/']],
  // The generated code built on those two: typed input parsers and search-argument parsers.
  ['generated', ['generated/']],
  ['store', ['runtime/store/']],
  ['jobs', ['runtime/jobs/']],
  ['access', ['runtime/access/']],
  ['rest', ['runtime/rest/']],
  ['graphql', ['runtime/graphql/']],
  ['bots', ['runtime/bots/']],
  ['subscriptions', ['runtime/subscriptions/']],
  ['http', ['runtime/http/']],
  ['server', ['runtime/server/', 'runtime/main.ts']],
  ['cli', ['runtime/cli/']],
];
/** Peers that share no code: none imports another, though all sit below everything else. */
const PEERS = new Set(['model', 'observability', 'hl7', 'generated/types']);

const LAYERS: readonly Layer[] = [
  ...SERVER_LAYERS.map(([name, paths], rank) => ({
    name,
    paths,
    uses: SERVER_LAYERS.slice(0, rank)
      .map(([lower]) => lower)
      .filter((lower) => !(PEERS.has(name) && PEERS.has(lower))),
  })),
  // The client is a library of its own for browsers and Node: the shared bottom layers only.
  { name: 'client', paths: ['runtime/client/'], uses: ['model', 'hl7', 'generated/types'] },
  // The generator writes generated/; it shares only the contracts of the bottom layer.
  { name: 'generator', paths: ['generator/'], uses: ['model'] },
];

const ROOTS = ['runtime', 'generated', 'generator'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** Each file's relative imports, resolved to repository paths. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of ROOTS.flatMap(sourceFiles)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    graph.set(
      file,
      importedFiles
        .map((i) => i.fileName)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) =>
          normalize(join(dirname(file), specifier))
            .replace(/\.js$/, '.ts')
            .replace(/\\/g, '/'),
        ),
    );
  }
  return graph;
}

function layerOf(file: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of LAYERS)
    for (const path of layer.paths)
      if ((file === path || file.startsWith(path)) && path.length > (best?.length ?? -1))
        best = { layer, length: path.length };
  return best?.layer;
}

/** Strongly connected components of more than one node (Tarjan's algorithm). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const indexes = new Map<string, number>();
  const lows = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indexes.set(node, index);
    lows.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!indexes.has(next)) {
        visit(next);
        lows.set(node, Math.min(lows.get(node)!, lows.get(next)!));
      } else if (onStack.has(next)) lows.set(node, Math.min(lows.get(node)!, indexes.get(next)!));
    }
    if (lows.get(node) !== indexes.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!indexes.has(node)) visit(node);
  return found;
}

const graph = importGraph();

describe('the layers of docs/architecture.md', () => {
  it('place every source file in a layer', () => {
    expect([...graph.keys()].filter((file) => !layerOf(file))).toEqual([]);
  });

  it('import only the layers below them', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      const from = layerOf(file)!;
      for (const target of imports) {
        const to = layerOf(target);
        if (!to || to === from || from.uses.includes(to.name)) continue;
        upward.push(`${file} imports ${target}: ${from.name} may not import ${to.name}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('have no import cycle between folders', () => {
    const folders = new Map<string, Set<string>>();
    for (const [file, imports] of graph) {
      const folder = dirname(file);
      const targets = folders.get(folder) ?? new Set<string>();
      for (const target of imports) if (dirname(target) !== folder) targets.add(dirname(target));
      folders.set(folder, targets);
    }
    const folderGraph = new Map([...folders].map(([folder, targets]) => [folder, [...targets]]));
    expect(cycles(folderGraph).map((cycle) => cycle.join(' ↔ '))).toEqual([]);
  });

  it('have no import cycle between files', () => {
    // FHIR's datatypes refer to each other (Identifier.assigner is a Reference, Reference.identifier
    // an Identifier): the generated interfaces must, as type-only imports.
    const code = new Map([...graph].filter(([file]) => !file.startsWith('generated/types/')));
    expect(cycles(code).map((cycle) => cycle.join(' ↔ '))).toEqual([]);
  });

  it('finds an upward edge and a cycle when there is one', () => {
    // The checks themselves: a store file importing http, and two files importing each other.
    expect(layerOf('runtime/store/x.ts')!.uses).not.toContain('http');
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
  });
});

describe('the repository', () => {
  /** Relative paths in source text: imports, `new URL('…', import.meta.url)`, file names. */
  const RELATIVE = /['"`](\.\.?\/[^'"`$\s]*)['"`]/g;

  it('stands alone: no source or test names a path outside it', () => {
    const root = process.cwd();
    const outside: string[] = [];
    for (const file of ['runtime', 'generator', 'test', 'bench'].flatMap(sourceFiles)) {
      for (const [, path] of readFileSync(file, 'utf8').matchAll(RELATIVE)) {
        const target = join(root, dirname(file), path);
        if (!target.startsWith(`${root}/`)) outside.push(`${file}: ${path}`);
      }
    }
    expect(outside).toEqual([]);
  });
});
