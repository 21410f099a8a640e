/**
 * How generated files read in a diff: a resource type's reverse-reference fields (`WidgetList`
 * on every type Widget's reference parameters can point to) live in that resource type's files, so
 * that a change to its search parameters changes its files only; the SDL keeps each type's
 * elements in StructureDefinition order and breaks long lines as prettier does.
 */
import { Kind, Lexer, parse, Source, TokenKind, type DefinitionNode } from 'graphql';
import { resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import type { GeneratedFile } from '../../generator/emit/generated-file.js';
import { emitters, generate } from '../../generator/generate.js';
import { buildIR } from '../../generator/ir/build-ir.js';
import { loadSpec } from '../../generator/load/load-spec.js';
import type { SearchParameter, Spec } from '../../generator/load/spec-types.js';
import { renderFile } from '../../generator/write.js';
import type { ResolverWiring } from '../../runtime/model/resolver-wiring.js';
import type { SchemaPiece } from '../../runtime/model/schema-piece.js';
import { FIXTURE_SPEC, fixtureWith, searchParameter } from './spec-builders.js';

const files = generate(FIXTURE_SPEC);

function fileAt(generated: readonly GeneratedFile[], path: string): GeneratedFile {
  const file = generated.find((f) => f.path === path);
  if (!file) throw new Error(`Nothing generates ${path}`);
  return file;
}

/** `[kind, type name, field names]` of each definition in a generated SDL file, as written. */
async function sdlBlocks(path: string, generated = files): Promise<[string, string, string[]][]> {
  const { definitions } = parse(await renderFile(fileAt(generated, path)));
  return definitions.map((definition: DefinitionNode) => {
    const named = definition as {
      name?: { value: string };
      fields?: readonly { name: { value: string } }[];
    };
    return [
      definition.kind,
      named.name?.value ?? '',
      (named.fields ?? []).map((field) => field.name.value),
    ];
  });
}

const jsonData = <T>(path: string, generated = files) =>
  JSON.parse(fileAt(generated, path).content) as T;

describe('reverse-reference fields', () => {
  it('are written in the referring type’s SDL, as `extend type`', async () => {
    expect(await sdlBlocks('graphql/Widget.graphql')).toContainEqual([
      Kind.OBJECT_TYPE_EXTENSION,
      'Patient',
      ['WidgetConnection', 'WidgetList'],
    ]);
  });

  it('are not in the SDL of the type they are added to', async () => {
    const fields = (await sdlBlocks('graphql/Patient.graphql')).flatMap(([, , names]) => names);
    expect(fields).not.toContain('WidgetList');
    expect(fields).not.toContain('ObservationList');
  });

  it('are in the referring type’s schema piece, as extensions', () => {
    const widget = jsonData<SchemaPiece>('graphql/Widget.json');
    expect(
      widget.extensions?.map(({ type, fields }) => [type, fields.map(([name]) => name)]),
    ).toStrictEqual([['Patient', ['WidgetList', 'WidgetConnection']]]);
    const patient = jsonData<SchemaPiece>('graphql/Patient.json');
    const patientFields = patient.objects!.find((o) => o.name === 'Patient')!.fields;
    expect(patientFields.map(([name]) => name)).not.toContain('WidgetList');
  });

  it('are wired in the referring type’s resolver file', () => {
    expect(jsonData<ResolverWiring>('resolvers/Widget.json').Patient).toStrictEqual({
      WidgetList: { kind: 'reverseSearch', resourceType: 'Widget' },
      WidgetConnection: { kind: 'reverseConnection', resourceType: 'Widget' },
    });
    expect(Object.keys(jsonData<ResolverWiring>('resolvers/Patient.json').Patient)).not.toContain(
      'WidgetList',
    );
  });

  it('extend each type a type refers to, in one block per type, sorted', async () => {
    const spec = fixtureWith({
      sps: [
        searchParameter({
          code: 'related',
          base: ['Widget'],
          type: 'reference',
          target: ['Widget', 'Patient', 'Observation'],
        }),
      ],
    });
    const generated = emitters.flatMap((emit) => emit(buildIR(spec)));
    const extensions = (await sdlBlocks('graphql/Widget.graphql', generated)).filter(
      ([kind, name]) =>
        kind === Kind.OBJECT_TYPE_EXTENSION && !['Query', 'Mutation'].includes(name),
    );
    expect(extensions.map(([, name]) => name)).toStrictEqual(['Observation', 'Patient', 'Widget']);
  });

  it('change with the referring type’s search parameters in its files only', () => {
    // Widget's `owner` gets a new code and a second target: Patient's WidgetList loses an
    // argument, Observation gains WidgetList.
    const changed = withSearchParameter('Widget-owner', {
      code: 'holder',
      target: ['Observation', 'Patient'],
    });
    const before = new Map(files.map((f) => [f.path, f]));
    const paths = emitters
      .flatMap((emit) => emit(buildIR(changed)))
      .filter((file) => JSON.stringify(file) !== JSON.stringify(before.get(file.path)))
      .map((file) => file.path);
    expect(paths).toContain('graphql/Widget.graphql');
    expect(paths.filter((path) => !/\/Widget\.\w+$/.test(path))).toStrictEqual([]);
  });
});

describe('SDL order', () => {
  it('keeps a type’s elements in StructureDefinition order, a primitive’s _x after it', async () => {
    const patient = (await sdlBlocks('graphql/Patient.graphql')).find(
      ([kind, name]) => kind === Kind.OBJECT_TYPE_DEFINITION && name === 'Patient',
    );
    expect(patient?.[2]).toStrictEqual([
      'resourceType',
      'id',
      'language',
      '_language',
      'contained',
      'extension',
      'modifierExtension',
      'identifier',
      'active',
      '_active',
      'name',
      'gender',
      '_gender',
      'birthDate',
      '_birthDate',
      'deceasedBoolean',
      '_deceasedBoolean',
      'deceasedDateTime',
      '_deceasedDateTime',
      'contact',
      'link',
      // Then the generic reverse fields every resource type has.
      '_reverseList',
      '_reverseConnection',
    ]);
  });

  it('sorts the types it adds, and the root fields', async () => {
    const blocks = await sdlBlocks('graphql/Patient.graphql');
    expect(blocks.map(([kind, name]) => `${kind} ${name}`)).toStrictEqual([
      'ObjectTypeDefinition Patient',
      'ObjectTypeDefinition PatientConnection',
      'ObjectTypeDefinition PatientConnectionEdge',
      'ObjectTypeDefinition PatientContact',
      'InputObjectTypeDefinition PatientContactCreate',
      'InputObjectTypeDefinition PatientContactUpdate',
      'InputObjectTypeDefinition PatientCreate',
      'ObjectTypeDefinition PatientLink',
      'InputObjectTypeDefinition PatientLinkCreate',
      'InputObjectTypeDefinition PatientLinkUpdate',
      'InputObjectTypeDefinition PatientUpdate',
      'EnumTypeDefinition Patient_ReferenceParameter',
      'ObjectTypeExtension Query',
      'ObjectTypeExtension Mutation',
      'ObjectTypeExtension Patient',
    ]);
    const [query, mutation] = blocks.filter(([, name]) => ['Query', 'Mutation'].includes(name));
    expect(query[2]).toStrictEqual(['Patient', 'PatientConnection', 'PatientList']);
    expect(mutation[2]).toStrictEqual(['PatientCreate', 'PatientDelete', 'PatientUpdate']);
  });
});

describe('SDL line width', () => {
  it('keeps every line that holds syntax within prettier’s printWidth', async () => {
    const { printWidth } = (await resolveConfig('package.json'))!;
    const sdl = files.filter((file) => file.path.endsWith('.graphql'));
    const long = await Promise.all(
      sdl.map(async (file) => [
        file.path,
        syntaxLinesLongerThan(await renderFile(file), printWidth!),
      ]),
    );
    expect(long.filter(([, lines]) => lines.length > 0)).toStrictEqual([]);
  });
});

const DESCRIPTIONS = new Set([TokenKind.BLOCK_STRING, TokenKind.STRING]);

/** Lines past `width` that hold a token other than a description: those could have been broken. */
function syntaxLinesLongerThan(sdl: string, width: number): string[] {
  const lines = sdl.split('\n');
  const long = new Set<string>();
  const lexer = new Lexer(new Source(sdl));
  // The lexer skips comments, such as the do-not-edit header.
  for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
    const line = lines[token.line - 1];
    if (line.length > width && !DESCRIPTIONS.has(token.kind)) long.add(line);
  }
  return [...long];
}

/** The fixture spec with one search parameter changed, still read from the same file. */
function withSearchParameter(id: string, change: Partial<SearchParameter>): Spec {
  const spec = loadSpec(FIXTURE_SPEC);
  const files = new Map(spec.files);
  const searchParameters = spec.searchParameters.map((parameter) => {
    if (parameter.id !== id) return parameter;
    const changed = { ...parameter, ...change };
    files.set(changed, spec.files.get(parameter)!);
    return changed;
  });
  return { ...spec, searchParameters, files };
}
