/**
 * Introspection of the whole of R4 yields 53 MB of JSON: 1,754 types whose fields carry 360,000
 * arguments (every type offers the searches of each type that refers to it). graphql-js took
 * about 2.5 s of CPU for it and 0.7 s more to serialize it, with the event loop blocked
 * throughout: it builds a resolve-info object, a path and an argument map for each of its
 * 4 million values, and collecting that garbage was a quarter of the time.
 *
 * So introspection runs here, through the resolvers graphql-js defines for `__Schema`, `__Type`…
 * (the answer is the same, byte for byte), with fields collected once per selection and type,
 * arguments read once per field node, and the JSON text of one value under one selection built
 * once: argument lists are shared by every field offering the same searches, named types by
 * every field of that type. It takes about a third of the time, and lets other requests in every
 * few milliseconds. One introspection runs at a time per process, identical requests share one
 * run, and the last answers are kept by the query's printed form, so that formatting and
 * comments do not make a query new. An answer is kept as one Buffer, the same object for every
 * request it answers, so that the HTTP layer can keep its hash and compressed forms beside it.
 */
import {
  BREAK,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  getArgumentValues,
  getDirectiveValues,
  getOperationAST,
  getNullableType,
  getVariableValues,
  isListType,
  isNonNullType,
  isObjectType,
  print,
  typeFromAST,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * Answers kept, by entries and by bytes together, across every schema (instance-level
 * `$graphql` has one per resource type): an answer about the whole of R4 is tens of megabytes.
 */
const MAX_ANSWERS = 8;
const MAX_ANSWER_BYTES = 160 * 1024 * 1024;
/** How long a run computes before it lets other requests in. */
const SLICE_MS = 10;
/** Objects nested deeper (the root is 0) are built in one go: a field, an argument. */
const OUTER_DEPTH = 2;
/** Finished answers, oldest first, and the bytes they hold; answers being computed. */
const answers = new Map<string, Buffer>();
let answerBytes = 0;
const pending = new Map<string, Promise<Buffer>>();
const schemaIds = new WeakMap<GraphQLSchema, number>();
let lastSchemaId = 0;
let running: Promise<unknown> = Promise.resolve();

/** True when the operation selects only `__schema`, `__type` and `__typename` at its root. */
export function isIntrospectionOnly(
  document: DocumentNode,
  operationName: string | undefined,
): boolean {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations[0];
  if (!operation || operation.operation !== 'query') return false;
  return operation.selectionSet.selections.every(
    (s) => s.kind === Kind.FIELD && s.name.value.startsWith('__'),
  );
}

/**
 * The serialized response (`{"data":…}`, UTF-8) to a validated introspection-only query.
 * `fallback` answers through graphql-js what this module leaves to it: variables that do not fit
 * their types (the answer is an error), and FHIR's shaping directives.
 */
export function answerIntrospection(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>>,
  operationName: string | undefined,
  fallback: () => Promise<string>,
): Promise<Buffer> {
  let schemaId = schemaIds.get(schema);
  if (schemaId === undefined) schemaIds.set(schema, (schemaId = ++lastSchemaId));
  const key = JSON.stringify([schemaId, print(document), variables, operationName ?? null]);
  const kept = answers.get(key);
  if (kept !== undefined) {
    answers.delete(key);
    answers.set(key, kept);
    return Promise.resolve(kept);
  }
  const computing = pending.get(key);
  if (computing) return computing;
  const answer = oneAtATime(async () =>
    Buffer.from(
      (await introspect(schema, document, variables, operationName)) ?? (await fallback()),
    ),
  );
  pending.set(key, answer);
  answer.then(
    (bytes) => {
      pending.delete(key);
      keep(key, bytes);
    },
    () => pending.delete(key),
  );
  return answer;
}

/** Keeps `bytes`, dropping the oldest answers while there are too many or too large. */
function keep(key: string, bytes: Buffer): void {
  if (bytes.length > MAX_ANSWER_BYTES) return;
  answers.set(key, bytes);
  answerBytes += bytes.length;
  for (const [oldest, oldBytes] of answers) {
    if (answers.size <= MAX_ANSWERS && answerBytes <= MAX_ANSWER_BYTES) break;
    answers.delete(oldest);
    answerBytes -= oldBytes.length;
  }
}

function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const result = running.then(work);
  running = result.catch(() => undefined);
  return result;
}

type Fields = Map<string, FieldNode[]>;

/** The answer, or undefined for graphql-js to give. */
async function introspect(
  schema: GraphQLSchema,
  document: DocumentNode,
  inputs: Readonly<Record<string, unknown>>,
  operationName: string | undefined,
): Promise<string | undefined> {
  const operation = getOperationAST(document, operationName);
  const root = schema.getQueryType();
  if (!operation || !root || usesOtherDirectives(document)) return undefined;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], { ...inputs });
  if (coerced.errors) return undefined;
  const variables = coerced.coerced;
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  const info = { schema } as GraphQLResolveInfo;
  const collected = new Map<FieldNode[], Map<GraphQLObjectType, Fields>>();
  const argumentsOf = new Map<FieldNode, Record<string, unknown>>();
  const built = new Map<FieldNode[], Map<unknown, string>>();

  const included = (node: SelectionNode) =>
    !node.directives?.length ||
    (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
      getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false);
  const applies = (
    condition: FragmentDefinitionNode['typeCondition'] | undefined,
    type: GraphQLObjectType,
  ) => {
    if (!condition) return true;
    const conditional = typeFromAST(schema, condition);
    return conditional === type;
  };
  const collect = (
    type: GraphQLObjectType,
    set: SelectionSetNode,
    into: Fields,
    visited: Set<string>,
  ): void => {
    for (const selection of set.selections) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const list = into.get(key);
        if (list) list.push(selection);
        else into.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (applies(selection.typeCondition, type))
          collect(type, selection.selectionSet, into, visited);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (visited.has(name) || !fragment || !applies(fragment.typeCondition, type)) continue;
        visited.add(name);
        collect(type, fragment.selectionSet, into, visited);
      }
    }
  };
  const subfields = (type: GraphQLObjectType, nodes: FieldNode[]): Fields => {
    let byType = collected.get(nodes);
    if (!byType) collected.set(nodes, (byType = new Map()));
    let fields = byType.get(type);
    if (!fields) {
      fields = new Map();
      const visited = new Set<string>();
      for (const node of nodes)
        if (node.selectionSet) collect(type, node.selectionSet, fields, visited);
      byType.set(type, fields);
    }
    return fields;
  };
  const argumentValues = (field: GraphQLField<unknown, unknown>, node: FieldNode) => {
    let found = argumentsOf.get(node);
    if (!found) argumentsOf.set(node, (found = getArgumentValues(field, node, variables)));
    return found;
  };

  const resolveField = (type: GraphQLObjectType, nodes: FieldNode[], source: unknown) => {
    const name = nodes[0].name.value;
    if (name === '__typename') return { type: undefined, value: type.name };
    const field =
      type === root
        ? name === '__schema'
          ? SchemaMetaFieldDef
          : TypeMetaFieldDef
        : type.getFields()[name];
    const value = field.resolve!(source, argumentValues(field, nodes[0]), undefined, info);
    return { type: field.type, value };
  };
  /**
   * The value as JSON text. Arguments are shared between the fields that take the same search
   * parameters, and named types between every field of their type: the text for one such
   * value and selection is built once, and reused.
   */
  const json = (type: GraphQLOutputType, nodes: FieldNode[], value: unknown): string => {
    if (isNonNullType(type)) return json(type.ofType, nodes, value);
    if (value === null || value === undefined) return 'null';
    if (!isListType(type) && !isObjectType(type))
      return JSON.stringify((type as GraphQLLeafType).serialize(value)) ?? 'null';
    let texts = built.get(nodes);
    if (!texts) built.set(nodes, (texts = new Map()));
    let text = texts.get(value);
    if (text === undefined) {
      text = isListType(type)
        ? `[${Array.from(value as Iterable<unknown>, (item) => json(type.ofType, nodes, item)).join(',')}]`
        : object(type as GraphQLObjectType, nodes, value);
      texts.set(value, text);
    }
    return text;
  };
  const object = (type: GraphQLObjectType, nodes: FieldNode[], source: unknown): string => {
    const parts: string[] = [];
    for (const [key, fieldNodes] of subfields(type, nodes)) {
      const { type: fieldType, value } = resolveField(type, fieldNodes, source);
      parts.push(
        `${JSON.stringify(key)}:${fieldType ? json(fieldType, fieldNodes, value) : JSON.stringify(value)}`,
      );
    }
    return `{${parts.join(',')}}`;
  };

  // The outer objects (the root, `__schema`, each type) are serialized here, with a pause between
  // the items of their lists: one type (`Query`: 900 fields) is megabytes of text.
  let sliceStart = performance.now();
  const pause = async () => {
    if (performance.now() - sliceStart < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
  const serialize = async (
    type: GraphQLOutputType,
    nodes: FieldNode[],
    value: unknown,
    depth: number,
  ): Promise<string> => {
    const nullable = getNullableType(type);
    if (depth > OUTER_DEPTH || value === null || value === undefined)
      return json(type, nodes, value);
    if (isListType(nullable)) {
      const items: string[] = [];
      for (const item of value as Iterable<unknown>) {
        items.push(await serialize(nullable.ofType, nodes, item, depth));
        await pause();
      }
      return `[${items.join(',')}]`;
    }
    return isObjectType(nullable)
      ? serializeObject(nullable, subfields(nullable, nodes), value, depth + 1)
      : json(type, nodes, value);
  };
  const serializeObject = async (
    type: GraphQLObjectType,
    fields: Fields,
    source: unknown,
    depth: number,
  ): Promise<string> => {
    const parts: string[] = [];
    for (const [key, nodes] of fields) {
      const { type: fieldType, value } = resolveField(type, nodes, source);
      const text = fieldType
        ? await serialize(fieldType, nodes, value, depth)
        : JSON.stringify(value);
      parts.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  };
  const rootFields: Fields = new Map();
  collect(root, operation.selectionSet, rootFields, new Set());
  return `{"data":${await serializeObject(root, rootFields, undefined, 0)}}`;
}

/** Directives other than `@skip` and `@include` are FHIR's, which reshape the answer. */
function usesOtherDirectives(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value === 'skip' || node.name.value === 'include') return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}
