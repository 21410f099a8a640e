/**
 * Resolver wiring per resource type and datatype (generated/resolvers/): which runtime resolver
 * serves each field that needs one. Fields that only read a property of their parent need none.
 * A resource type's reverse-reference fields are wired in its own file, whichever type they are on.
 */
import type { ResolverDescriptor, ResolverWiring } from '../../runtime/model/resolver-wiring.js';
import type { ComplexTypeIR, ResourceIR, SpecIR } from '../ir/ir-types.js';
import { GENERIC_REVERSE_FIELDS } from '../../runtime/model/generic-reverse-fields.js';
import { sortedBy } from '../ir/naming.js';
import { jsonFile, jsonIndexFile, type GeneratedFile } from './generated-file.js';

const REFERENCE_TYPE = 'Reference';
const ANY_RESOURCE = 'AnyResource';

export function emitResolvers(ir: SpecIR): GeneratedFile[] {
  const owners = new Map<string, ComplexTypeIR[]>();
  for (const type of ir.datatypes)
    owners.set(type.owner, [...(owners.get(type.owner) ?? []), type]);
  const datatypeFiles = [...owners].map(([owner, types]) =>
    wiringFile(owner, types, wireTypes(types)),
  );
  const resourceFiles = ir.resources.map((resource) =>
    wiringFile(resource.name, [resource], wireResource(resource)),
  );
  const allSources = sortedBy(
    new Set([...ir.datatypes, ...ir.resources].flatMap((t) => t.sources)),
    (s) => s,
  );
  const shared = jsonFile('resolvers/schema.json', allSources, {
    [ANY_RESOURCE]: { __resolveType: { kind: 'resourceTypeOf' } },
  });
  const files = sortedBy([shared, ...datatypeFiles, ...resourceFiles], (f) => f.path);
  return [
    ...files,
    jsonIndexFile(
      'resolvers',
      files.map((f) => f.path.slice('resolvers/'.length, -'.json'.length)),
      allSources,
      {
        type: 'ResolverWiring',
        typeModule: '../../runtime/model/resolver-wiring.js',
        loader: 'loadResolverWiring',
        docs: 'Every piece of resolver wiring; Query and Mutation fields come from every resource type.',
      },
    ),
  ];
}

function wireResource(resource: ResourceIR): ResolverWiring {
  const { name: resourceType } = resource;
  const wiring: Record<string, Record<string, ResolverDescriptor>> = {
    Query: {
      [resourceType]: { kind: 'read', resourceType },
      [`${resourceType}List`]: { kind: 'search', resourceType },
      [`${resourceType}Connection`]: { kind: 'connection', resourceType },
    },
    Mutation: {
      [`${resourceType}Create`]: { kind: 'create', resourceType },
      [`${resourceType}Update`]: { kind: 'update', resourceType },
      [`${resourceType}Delete`]: { kind: 'delete', resourceType },
    },
    ...wireTypes([resource, ...resource.backbones]),
  };
  wiring[resourceType] = {
    ...wiring[resourceType],
    [GENERIC_REVERSE_FIELDS.List]: { kind: 'genericReverseSearch' },
    [GENERIC_REVERSE_FIELDS.Connection]: { kind: 'genericReverseConnection' },
  };
  for (const { target } of resource.referenceTargets) {
    wiring[target] = {
      ...wiring[target],
      [`${resourceType}List`]: { kind: 'reverseSearch', resourceType },
      [`${resourceType}Connection`]: { kind: 'reverseConnection', resourceType },
    };
  }
  return wiring;
}

/** Filtered repeating elements, and Reference.resource. */
function wireTypes(
  types: readonly ComplexTypeIR[],
): Record<string, Record<string, ResolverDescriptor>> {
  const wiring: Record<string, Record<string, ResolverDescriptor>> = {};
  for (const type of types) {
    const fields: Record<string, ResolverDescriptor> = {};
    for (const element of type.elements) {
      if (element.array && element.kind === 'complex')
        fields[element.name] = { kind: 'filterList' };
    }
    if (type.name === REFERENCE_TYPE) fields.resource = { kind: 'resolveReference' };
    if (Object.keys(fields).length > 0) wiring[type.name] = fields;
  }
  return wiring;
}

function wiringFile(
  owner: string,
  types: readonly ComplexTypeIR[],
  wiring: ResolverWiring,
): GeneratedFile {
  return jsonFile(
    `resolvers/${owner}.json`,
    sortedBy(new Set(types.flatMap((t) => t.sources)), (s) => s),
    wiring,
  );
}
