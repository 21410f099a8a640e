/**
 * IR → GraphQL schema pieces, one per resource type or datatype plus the shared `schema` piece.
 * The mapping follows FHIR's GraphQL page: elements as fields, `_x` for a primitive's id and
 * extensions, `Reference.resource`, root `T`, `TList`, `TConnection`, reverse references and
 * mutations.
 * @see http://hl7.org/fhir/R4/graphql.html
 */
import type {
  ArgumentData,
  FieldData,
  ObjectData,
  SchemaPiece,
} from '../../runtime/model/schema-piece.js';
import type { ComplexTypeIR, ElementIR, PrimitiveIR, ResourceIR, SpecIR } from '../ir/ir-types.js';
import { GENERIC_REVERSE_FIELDS } from '../../runtime/model/generic-reverse-fields.js';
import { graphqlNames as names, sortedBy, type InputKind } from '../ir/naming.js';

/** The datatype whose `resource` field follows the reference. @see http://hl7.org/fhir/R4/graphql.html#references */
const REFERENCE_TYPE = 'Reference';
/** Carries a primitive's `id` and `extension` in `_x`. @see http://hl7.org/fhir/R4/json.html#primitive */
const PRIMITIVE_EXTENSION_TYPE = 'Element';
const ANY_RESOURCE = 'AnyResource';
/** What every `<Type>Delete` mutation returns. */
const OPERATION_OUTCOME = 'OperationOutcome';
/**
 * Search parameters whose values are commonly repeated, several values ANDed as repeated REST
 * parameters are (`birthdate: ["ge1980", "lt1990"]`), take a list; every other search argument a
 * string, as in Medplum's schema. A single string fits a list argument too (GraphQL's input
 * coercion), and `$date: String` used there is read as `[String]` (argument-literals.ts).
 */
const LIST_SEARCH_TYPES: ReadonlySet<string> = new Set(['date', 'number', 'quantity']);
const PAGING: readonly ArgumentData[] = [
  ['_count', 'Int', 'Page size'],
  ['_offset', 'Int', 'Number of results to skip'],
  ['_sort', 'String', 'Sort keys, comma-separated, `-` for descending (`-date,name`)'],
];
const REVERSE_ANY = {
  list: GENERIC_REVERSE_FIELDS.List,
  connection: GENERIC_REVERSE_FIELDS.Connection,
} as const;
// Undescribed: these repeat on every resource type; the fields' descriptions say what they take.
const REVERSE_ANY_ARGUMENTS: readonly ArgumentData[] = [
  ['_type', 'ResourceType!'],
  ['_reference', 'String!'],
  ['_count', 'Int'],
  ['_offset', 'Int'],
  ['_sort', 'String'],
  ['_search', 'JSON'],
];
/** Mutation inputs come in both of Medplum's kinds, `PatientCreate` and `PatientUpdate`. */
const INPUT_KINDS: readonly InputKind[] = ['Create', 'Update'];
const CURSOR: ArgumentData = [
  '_cursor',
  'String',
  'A cursor from a connection: first, previous, next or last',
];

export function buildSchemaPieces(ir: SpecIR): SchemaPiece[] {
  if (ir.resources.length > 0 && !ir.resources.some((r) => r.name === OPERATION_OUTCOME)) {
    throw new Error(
      `spec/ has no ${OPERATION_OUTCOME} resource, which every <Type>Delete mutation returns: add HL7's ${OPERATION_OUTCOME} StructureDefinition (from profiles-resources.json) to spec/`,
    );
  }
  const scalars = scalarMap(ir.primitives);
  const arrayTypes = typesUsedAsArrays(ir);
  const datatypeOwners = new Map<string, ComplexTypeIR[]>();
  for (const type of ir.datatypes)
    datatypeOwners.set(type.owner, [...(datatypeOwners.get(type.owner) ?? []), type]);
  const datatypePieces = [...datatypeOwners].map(([owner, types]) => ({
    name: owner,
    objects: types.map((t) => outputObject(t, scalars)),
    inputs: INPUT_KINDS.flatMap((kind) => types.map((t) => inputObject(t, scalars, kind))),
    argumentSets: filterSets(types, arrayTypes),
  }));
  const resourcePieces = ir.resources.map((resource) =>
    resourcePiece(resource, scalars, arrayTypes),
  );
  return sortedBy([sharedPiece(ir), ...datatypePieces, ...resourcePieces], (p) => p.name);
}

/** What every piece relies on: custom scalars, the resource union, and FHIR's directives. */
function sharedPiece(ir: SpecIR): SchemaPiece {
  const resourceNames = ir.resources.map((r) => r.name);
  return {
    name: 'schema',
    scalars: [
      { name: 'JSON', description: 'A FHIR resource or other JSON value, as FHIR JSON writes it' },
    ],
    unions: [{ name: ANY_RESOURCE, description: 'Any FHIR resource', types: resourceNames }],
    objects: [connectionObject(ANY_RESOURCE), edgeObject(ANY_RESOURCE, ANY_RESOURCE)],
    enums: [
      { name: 'ResourceType', description: 'The FHIR resource types', values: resourceNames },
    ],
    directives: [
      {
        name: 'flatten',
        description: 'Merges the field’s children into its parent (FHIR GraphQL §4.8)',
        arguments: [],
      },
      { name: 'first', description: 'Keeps only the first item of a list', arguments: [] },
      {
        name: 'singleton',
        description: 'Presents a flattened list as a single value',
        arguments: [],
      },
      {
        name: 'slice',
        description:
          'Splits a flattened list by the value at `path` (FHIRPath; `$index` for the position)',
        arguments: [['path', 'String!']],
      },
    ],
    argumentSets: {
      id: [['id', 'ID!', 'The logical id']],
      [REVERSE_ANY.list]: REVERSE_ANY_ARGUMENTS,
      [REVERSE_ANY.connection]: [...REVERSE_ANY_ARGUMENTS, CURSOR],
      [`${REFERENCE_TYPE}.resource`]: [
        [
          'optional',
          'Boolean',
          'When true, an unresolvable reference yields null without an error',
        ],
        ['type', 'ResourceType', 'Resolve only when the target is of this type'],
      ],
    },
  };
}

function resourcePiece(
  resource: ResourceIR,
  scalars: ReadonlyMap<string, string>,
  arrayTypes: ReadonlySet<string>,
): SchemaPiece {
  const { name } = resource;
  const types = [resource, ...resource.backbones];
  const referenceParameters = resource.searchParameters.filter((p) => p.type === 'reference');
  const [root, ...backbones] = types.map((t) => outputObject(t, scalars));
  const search: ArgumentData[] = [
    ...PAGING,
    ...resource.searchArguments.map(({ name: arg, code, modifier }): ArgumentData => {
      const parameter = resource.searchParameters.find((p) => p.code === code)!;
      return [
        arg,
        searchArgumentType(parameter.type, modifier),
        // A modifier's argument points at its parameter's, which carries the description.
        modifier ? `${code}:${modifier}` : `${code} — ${firstLine(parameter.description)}`,
      ];
    }),
  ];
  // Reverse-reference fields repeat on every type a reference can point to, so their arguments
  // are not described in each copy: `_reference` is described on its enum, the search arguments
  // on the root `TList`.
  const reverse: ArgumentData[] = [
    ['_reference', `${names.referenceParameter(name)}!`],
    ...PAGING.map(([arg, type]): ArgumentData => [arg, type]),
    ...resource.searchParameters.map((p): ArgumentData => [p.argument, searchArgumentType(p.type)]),
  ];
  return {
    name,
    objects: [
      {
        ...root,
        fields: [
          ['resourceType', 'String', 'Always ' + name],
          ...root.fields,
          [
            REVERSE_ANY.list,
            `[${ANY_RESOURCE}]`,
            '`_type` resources referring here by `_reference`, which may point to any type; `_search`: `{ status: "final" }`',
            REVERSE_ANY.list,
          ],
          [
            REVERSE_ANY.connection,
            names.connection(ANY_RESOURCE),
            `${REVERSE_ANY.list}, paged`,
            REVERSE_ANY.connection,
          ],
        ],
      },
      ...backbones,
      connectionObject(name),
      edgeObject(name, name),
    ],
    inputs: INPUT_KINDS.flatMap((kind) =>
      types.map((t, i) => {
        const input = inputObject(t, scalars, kind);
        return i === 0
          ? { ...input, fields: [['resourceType', 'String', 'Always ' + name], ...input.fields] }
          : input;
      }),
    ),
    enums: referenceParameters.length
      ? [
          {
            name: names.referenceParameter(name),
            description: `Reference search parameters of ${name}: in \`${name}List(_reference: …)\`, which reference points to the parent`,
            values: referenceParameters.map((p) => p.argument),
          },
        ]
      : [],
    argumentSets: {
      ...filterSets(types, arrayTypes),
      [`${name}.search`]: search,
      // Described once, on TList's.
      [`${name}.connection`]: [...search.map(([arg, type]): ArgumentData => [arg, type]), CURSOR],
      [`${name}.create`]: [['res', `${names.input(name, 'Create')}!`, `The new ${name}`]],
      [`${name}.update`]: [
        ['id', 'ID!', 'The logical id'],
        ['res', `${names.input(name, 'Update')}!`, `The ${name}'s new content`],
      ],
      ...(referenceParameters.length
        ? {
            [`${name}.reverse`]: reverse,
            // Paging only: the search arguments of a paged reverse reference are taken by the
            // generic field it is rewritten to (fhir-dialect.ts), which keeps the schema small.
            [`${name}.reverseConnection`]: [
              ...reverse.filter(([arg]) => arg.startsWith('_')),
              [CURSOR[0], CURSOR[1]],
            ],
          }
        : {}),
    },
    query: [
      [name, name, `Reads one ${name} by id`, 'id'],
      [`${name}List`, `[${name}]`, `Searches ${name} resources`, `${name}.search`],
      [
        `${name}Connection`,
        names.connection(name),
        `Searches ${name} resources, paged`,
        `${name}.connection`,
      ],
    ],
    mutation: [
      [`${name}Create`, name, `Creates a ${name}`, `${name}.create`],
      [`${name}Update`, name, `Replaces a ${name}`, `${name}.update`],
      [`${name}Delete`, OPERATION_OUTCOME, `Deletes a ${name}`, 'id'],
    ],
    extensions: resource.referenceTargets.map(({ target }) => ({
      type: target,
      fields: [
        [
          `${name}List`,
          `[${name}]`,
          `${name} resources that refer to this ${target}`,
          `${name}.reverse`,
        ],
        [
          `${name}Connection`,
          names.connection(name),
          `${name} resources that refer to this ${target}, paged`,
          `${name}.reverseConnection`,
        ],
      ],
    })),
  };
}

function edgeObject(name: string, resourceType: string): ObjectData {
  return {
    name: names.edge(name),
    description: `One ${name} search result`,
    fields: [
      ['mode', 'String', 'match or include'],
      ['score', 'Float', 'Relevance, when the search ranks'],
      ['resource', resourceType],
    ],
  };
}

function connectionObject(name: string): ObjectData {
  return {
    name: names.connection(name),
    description: `A page of ${name} search results`,
    fields: [
      ['count', 'Int', 'Total number of matches'],
      ['offset', 'Int', 'Position of this page’s first result'],
      ['pageSize', 'Int', 'Number of results per page'],
      ['pagesize', 'Int', 'pageSize, as the FHIR GraphQL page spells it'],
      ['first', 'String', 'Cursor of the first page'],
      ['previous', 'String', 'Cursor of the previous page'],
      ['next', 'String', 'Cursor of the next page'],
      ['last', 'String', 'Cursor of the last page'],
      ['edges', `[${names.edge(name)}]`, 'The results'],
    ],
  };
}

function outputObject(type: ComplexTypeIR, scalars: ReadonlyMap<string, string>): ObjectData {
  const fields = type.elements.flatMap((element): FieldData[] => {
    const wrap = (t: string) => (element.array ? `[${t}]` : t);
    switch (element.kind) {
      case 'primitive':
        return [
          [element.name, wrap(scalars.get(element.type)!), element.description],
          ...(element.extensible
            ? [
                [
                  `_${element.name}`,
                  wrap(PRIMITIVE_EXTENSION_TYPE),
                  `Extensions of ${element.name}`,
                ] as const,
              ]
            : []),
        ];
      case 'resource':
        return [[element.name, wrap(ANY_RESOURCE), element.description]];
      case 'complex':
        return [
          [
            element.name,
            wrap(element.type),
            element.description,
            element.array ? `${element.type}.filter` : undefined,
          ],
        ];
    }
  });
  if (type.name === REFERENCE_TYPE) {
    fields.push([
      'resource',
      ANY_RESOURCE,
      'The resource this reference points to',
      `${REFERENCE_TYPE}.resource`,
    ]);
  }
  return { name: type.name, description: type.description, fields: fields.map(trimField) };
}

function inputObject(
  type: ComplexTypeIR,
  scalars: ReadonlyMap<string, string>,
  kind: InputKind,
): ObjectData {
  // The elements are described on the output type; an input only points there.
  const fields = type.elements.flatMap((element: ElementIR): FieldData[] => {
    const required = element.min > 0 && !element.choiceGroup ? '!' : '';
    const wrap = (t: string) => (element.array ? `[${t}]` : t) + required;
    const wrapExtension = (t: string) => (element.array ? `[${t}]` : t);
    switch (element.kind) {
      case 'primitive':
        return [
          [element.name, wrap(scalars.get(element.type)!)],
          ...(element.extensible
            ? [
                [
                  `_${element.name}`,
                  wrapExtension(names.input(PRIMITIVE_EXTENSION_TYPE, kind)),
                ] as const,
              ]
            : []),
        ];
      case 'resource':
        return [[element.name, wrap('JSON')]];
      case 'complex':
        return [[element.name, wrap(names.input(element.type, kind))]];
    }
  });
  return {
    name: names.input(type.name, kind),
    description: `${type.name}, as a mutation's input (${kind === 'Create' ? 'create' : 'update'})`,
    fields: fields.map(trimField),
  };
}

/** Arguments of a repeating element of each type: `name(use: official)`, `extension(url: …)`. */
function filterSets(
  types: readonly ComplexTypeIR[],
  arrayTypes: ReadonlySet<string>,
): Record<string, ArgumentData[]> {
  const sets: Record<string, ArgumentData[]> = {};
  for (const type of types.filter((t) => arrayTypes.has(t.name))) {
    sets[`${type.name}.filter`] = [
      ['fhirpath', 'String', 'Keeps the items for which this FHIRPath is true'],
      ['_count', 'Int', 'At most this many items'],
      ['_offset', 'Int', 'Skips this many items'],
      // `name(use: "official")` keeps the items whose `use` is that (docs/graphql.md): these
      // repeat on every repeating element, so they go undescribed.
      ...type.filterBy.map((name): ArgumentData => [name, 'String']),
    ];
  }
  return sets;
}

function typesUsedAsArrays(ir: SpecIR): Set<string> {
  const all = [...ir.datatypes, ...ir.resources.flatMap((r) => [r, ...r.backbones])];
  return new Set(
    all
      .flatMap((t) => t.elements)
      .filter((e) => e.array && e.kind === 'complex')
      .map((e) => e.type),
  );
}

/** GraphQL scalar per FHIR primitive. @see http://hl7.org/fhir/R4/graphql.html#schema */
function scalarMap(primitives: readonly PrimitiveIR[]): Map<string, string> {
  const scalar = (p: PrimitiveIR) =>
    p.jsonType === 'boolean'
      ? 'Boolean'
      : p.jsonType === 'number'
        ? p.integer
          ? 'Int'
          : 'Float'
        : 'String';
  return new Map(primitives.map((p) => [p.name, scalar(p)]));
}

function searchArgumentType(type: string, modifier?: string): string {
  return LIST_SEARCH_TYPES.has(type) && modifier !== 'missing' ? '[String]' : 'String';
}

function firstLine(text: string): string {
  return text.split(/\r?\n/)[0].trim();
}

function trimField([name, type, description, set]: FieldData): FieldData {
  const trimmed = description?.trim();
  return set
    ? [name, type, trimmed || undefined, set]
    : trimmed
      ? [name, type, trimmed]
      : [name, type];
}
