/**
 * Type definitions for validating FHIR JSON on write (generated/definitions/), and the typed
 * input parsers built on them (generated/inputs/): `parsePatientInput(value)` returns a `Patient`
 * or throws with the path of each problem.
 */
import { VariableDeclarationKind } from 'ts-morph';
import type {
  ElementDefinition,
  PrimitiveDefinition,
  TypeDefinition,
} from '../../runtime/model/type-definition.js';
import type { ComplexTypeIR, ElementIR, SpecIR } from '../ir/ir-types.js';
import { sortedBy } from '../ir/naming.js';
import { jsonFile, typescriptFile, type GeneratedFile } from './generated-file.js';

const RUNTIME = '../../runtime';

export function emitDefinitions(ir: SpecIR): GeneratedFile[] {
  const owners = groupByOwner([
    ...ir.datatypes,
    ...ir.resources.flatMap((r) => [r, ...r.backbones]),
  ]);
  const files = [...owners].map(([owner, types]) =>
    jsonFile(`definitions/${owner}.json`, sourcesOf(types), types.map(toDefinition)),
  );
  return [
    ...files,
    primitivesFile(ir),
    registryFile(ir, [...owners.keys()]),
    ...ir.resources.map(inputParserFile),
  ];
}

function primitivesFile(ir: SpecIR): GeneratedFile {
  const primitives: PrimitiveDefinition[] = ir.primitives.map((p) => ({
    name: p.name,
    jsonType: p.jsonType,
    ...(p.pattern ? { pattern: p.pattern } : {}),
  }));
  const sources = sortedBy(new Set(ir.primitives.flatMap((p) => p.sources)), (s) => s);
  return jsonFile('definitions/primitives.json', sources, primitives);
}

/** `loadDefinitionRegistry()`: every type definition, read once on first use. */
function registryFile(ir: SpecIR, owners: readonly string[]): GeneratedFile {
  return typescriptFile(
    'definitions/index.ts',
    sourcesOf([...ir.datatypes, ...ir.resources]),
    (file) => {
      file.addImportDeclaration({
        moduleSpecifier: `${RUNTIME}/model/generated-json.js`,
        namedImports: ['readGeneratedJson'],
      });
      file.addImportDeclaration({
        moduleSpecifier: `${RUNTIME}/model/type-definition.js`,
        namedImports: ['DefinitionRegistry', 'PrimitiveDefinition', 'TypeDefinition'],
        isTypeOnly: true,
      });
      file.addVariableStatement({
        declarationKind: VariableDeclarationKind.Const,
        isExported: true,
        declarations: [
          {
            name: 'definitionOwners',
            type: 'readonly string[]',
            initializer: JSON.stringify(owners),
          },
        ],
      });
      file.addVariableStatement({
        declarationKind: VariableDeclarationKind.Let,
        declarations: [{ name: 'registry', type: 'DefinitionRegistry | undefined' }],
      });
      file.addFunction({
        name: 'loadDefinitionRegistry',
        isExported: true,
        docs: [
          'Every primitive, datatype, backbone and resource type, by name; read on first use.',
        ],
        returnType: 'DefinitionRegistry',
        statements: `registry ??= {
        primitives: Object.fromEntries(readGeneratedJson<PrimitiveDefinition[]>('definitions/primitives.json').map((p) => [p.name, p])),
        types: Object.fromEntries(definitionOwners.flatMap((owner) => readGeneratedJson<TypeDefinition[]>(\`definitions/\${owner}.json\`)).map((t) => [t.name, t])),
        resourceTypes: ${JSON.stringify(ir.resources.map((r) => r.name))},
      };
      return registry;`,
      });
    },
  );
}

function inputParserFile(resource: ComplexTypeIR): GeneratedFile {
  const { name } = resource;
  return typescriptFile(`inputs/${name}.ts`, resource.sources, (file) => {
    file.addImportDeclaration({
      moduleSpecifier: `${RUNTIME}/validation/validate-resource.js`,
      namedImports: ['parseResource'],
    });
    file.addImportDeclaration({
      moduleSpecifier: '../definitions/index.js',
      namedImports: ['loadDefinitionRegistry'],
    });
    file.addImportDeclaration({
      moduleSpecifier: `../types/${name}.js`,
      namedImports: [name],
      isTypeOnly: true,
    });
    file.addFunction({
      name: `parse${name}Input`,
      isExported: true,
      docs: [
        `A ${name} from untrusted JSON (a REST body, a GraphQL \`${name}Create(res:)\`), or ResourceValidationError listing each problem with its path.`,
      ],
      parameters: [{ name: 'value', type: 'unknown' }],
      returnType: name,
      statements: `return parseResource<${name}>(value, loadDefinitionRegistry(), { expectedType: '${name}' });`,
    });
  });
}

function toDefinition(type: ComplexTypeIR): TypeDefinition {
  return {
    name: type.name,
    kind: type.kind,
    path: type.path,
    elements: type.elements.map(toElementDefinition),
  };
}

function toElementDefinition(element: ElementIR): ElementDefinition {
  return {
    name: element.name,
    type: element.type,
    kind: element.kind,
    min: element.min,
    array: element.array,
    ...(element.choiceGroup ? { choiceGroup: element.choiceGroup } : {}),
    ...(element.targets.length ? { targets: element.targets } : {}),
    ...(element.kind === 'primitive' && !element.extensible ? { extensible: false as const } : {}),
  };
}

function groupByOwner(types: readonly ComplexTypeIR[]): Map<string, ComplexTypeIR[]> {
  const owners = new Map<string, ComplexTypeIR[]>();
  for (const type of sortedBy(types, (t) => t.owner))
    owners.set(type.owner, [...(owners.get(type.owner) ?? []), type]);
  return owners;
}

function sourcesOf(types: readonly ComplexTypeIR[]): string[] {
  return sortedBy(new Set(types.flatMap((t) => t.sources)), (s) => s);
}
