/**
 * Search maps per resource type (generated/search/): each parameter's code, type, FHIRPath and
 * targets, the GraphQL argument names (snake_case, modifiers as suffixes) that map to them, and a
 * typed parser from raw argument values to criteria.
 * @see http://hl7.org/fhir/R4/search.html
 */
import { VariableDeclarationKind } from 'ts-morph';
import type {
  SearchType,
  ResourceSearchDefinition,
  SearchParameterDefinition,
} from '../../runtime/model/search-definition.js';
import type { ResourceIR, SearchParameterIR, SpecIR } from '../ir/ir-types.js';
import { sortedBy } from '../ir/naming.js';
import { jsonFile, typescriptFile, type GeneratedFile } from './generated-file.js';

const RUNTIME = '../../runtime/search';
const VALUE_TYPES: Readonly<Record<SearchType, string>> = {
  composite: 'CompositeSearchValue',
  date: 'DateSearchValue',
  number: 'NumberSearchValue',
  quantity: 'QuantitySearchValue',
  reference: 'ReferenceSearchValue',
  special: 'SpecialSearchValue',
  string: 'StringSearchValue',
  token: 'TokenSearchValue',
  uri: 'UriSearchValue',
};

export function emitSearch(ir: SpecIR): GeneratedFile[] {
  return [...ir.resources.flatMap((r) => [definitionFile(r), parserFile(r)]), indexFile(ir)];
}

function definitionFile(resource: ResourceIR): GeneratedFile {
  const { name } = resource;
  const definition: ResourceSearchDefinition = {
    resourceType: name,
    parameters: Object.fromEntries(resource.searchParameters.map((p) => [p.code, toDefinition(p)])),
    arguments: Object.fromEntries(
      resource.searchArguments.map(
        (a) => [a.name, a.modifier ? [a.code, a.modifier] : [a.code]] as const,
      ),
    ),
  };
  return jsonFile(`search/${resource.name}.json`, resource.sources, definition);
}

/** `parsePatientSearch(args)`: typed arguments in, typed criteria out. */
function parserFile(resource: ResourceIR): GeneratedFile {
  const { name } = resource;
  const valueTypes = sortedBy(
    new Set(resource.searchParameters.map((p) => VALUE_TYPES[p.type])),
    (t) => t,
  );
  return typescriptFile(`search/${name}.ts`, resource.sources, (file) => {
    file.addImportDeclaration({
      moduleSpecifier: `${RUNTIME}/parse-search-arguments.js`,
      namedImports: ['parseSearchArguments'],
    });
    file.addImportDeclaration({
      moduleSpecifier: `${RUNTIME}/parse-search-arguments.js`,
      namedImports: ['RawSearchArgument', 'SearchCriterion'],
      isTypeOnly: true,
    });
    file.addImportDeclaration({
      moduleSpecifier: `${RUNTIME}/search-value.js`,
      namedImports: valueTypes,
      isTypeOnly: true,
    });
    file.addImportDeclaration({
      moduleSpecifier: './index.js',
      namedImports: ['loadSearchDefinition'],
    });
    file.addInterface({
      name: `${name}SearchArguments`,
      isExported: true,
      docs: [
        `${name}List / ${name}Connection search arguments. Several values: all must match; commas inside one value: any.`,
      ],
      properties: resource.searchArguments.map((a) => ({
        name: a.name,
        type: 'RawSearchArgument',
        hasQuestionToken: true,
        docs: [a.modifier ? `${a.code}:${a.modifier}` : a.code],
      })),
    });
    file.addTypeAlias({
      name: `${name}SearchCriterion`,
      isExported: true,
      type: resource.searchParameters
        .map((p) => `(SearchCriterion<${VALUE_TYPES[p.type]}> & { readonly code: '${p.code}' })`)
        .join(' | '),
    });
    file.addFunction({
      name: `parse${name}Search`,
      isExported: true,
      docs: [
        'Typed criteria, or a SearchValueError naming the argument and what was wrong with it.',
      ],
      parameters: [{ name: 'args', type: `${name}SearchArguments` }],
      returnType: `${name}SearchCriterion[]`,
      statements: `return parseSearchArguments(loadSearchDefinition('${name}'), args as Record<string, RawSearchArgument>) as ${name}SearchCriterion[];`,
    });
  });
}

function toDefinition(parameter: SearchParameterIR): SearchParameterDefinition {
  return {
    code: parameter.code,
    type: parameter.type,
    expression: parameter.expression,
    ...(parameter.targets.length ? { targets: parameter.targets } : {}),
    modifiers: parameter.modifiers,
    ...(parameter.components.length ? { components: parameter.components } : {}),
  };
}

/** `loadSearchDefinition(type)`: one resource type's search map, read on first use. */
function indexFile(ir: SpecIR): GeneratedFile {
  const sources = sortedBy(new Set(ir.resources.flatMap((r) => r.sources)), (s) => s);
  return typescriptFile('search/index.ts', sources, (file) => {
    file.addImportDeclaration({
      moduleSpecifier: '../../runtime/model/generated-json.js',
      namedImports: ['readGeneratedJson'],
    });
    file.addImportDeclaration({
      moduleSpecifier: '../../runtime/model/search-definition.js',
      namedImports: ['ResourceSearchDefinition'],
      isTypeOnly: true,
    });
    file.addVariableStatement({
      declarationKind: VariableDeclarationKind.Const,
      isExported: true,
      declarations: [
        {
          name: 'searchableTypes',
          type: 'ReadonlySet<string>',
          initializer: `new Set(${JSON.stringify(ir.resources.map((r) => r.name))})`,
        },
      ],
    });
    file.addVariableStatement({
      declarationKind: VariableDeclarationKind.Const,
      declarations: [
        { name: 'loaded', initializer: 'new Map<string, ResourceSearchDefinition>()' },
      ],
    });
    file.addFunction({
      name: 'loadSearchDefinition',
      isExported: true,
      docs: [
        "A resource type's search parameters by code and the GraphQL arguments that name them.",
      ],
      parameters: [{ name: 'resourceType', type: 'string' }],
      returnType: 'ResourceSearchDefinition',
      statements: `let definition = loaded.get(resourceType);
      if (!definition) {
        if (!searchableTypes.has(resourceType)) throw new Error(\`Unknown resource type \${resourceType}\`);
        definition = readGeneratedJson<ResourceSearchDefinition>(\`search/\${resourceType}.json\`);
        loaded.set(resourceType, definition);
      }
      return definition;`,
    });
  });
}
