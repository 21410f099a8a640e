/**
 * The general path of search extraction: HL7's fhirpath.js, with results kept as typed nodes
 * (`resolveInternalTypes: false`) so each value's FHIR type decides how it is indexed.
 *
 * `resolve()` never fetches: `resolve() is T` is rewritten to a check of the reference's
 * `Type/id` (or of the contained resource a `#id` names), and a bare `resolve()` yields nothing.
 */
import fhirpath from 'fhirpath';
import type { ResourceNode, UserInvocationTable } from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4';
import { elementTypeAtPath, type Emit, type Evaluator } from './extract-path-plan.js';
import { referenceTargetType } from './extract-reference.js';

const RESOLVE_IS = /\bresolve\(\)\s+is\s+(?:FHIR\.)?([A-Z][A-Za-z]*)\b/g;
const REFERENCE_IS = 'graphirReferenceIs';

/** FHIRPath system types that can come out of FHIR data (`Resource.id` is a System.String). */
const SYSTEM_TYPES: Readonly<Record<string, string>> = {
  'System.String': 'string',
  'System.Boolean': 'boolean',
  'System.Integer': 'integer',
  'System.Decimal': 'decimal',
  'System.Date': 'date',
  'System.DateTime': 'dateTime',
  'System.Time': 'time',
};

const userInvocationTable: UserInvocationTable = {
  [REFERENCE_IS]: {
    fn: (focus: ResourceNode[], type: string) =>
      focus.map((node) => referenceTargetType(node.data, rootOf(node).data) === type),
    arity: { 1: ['String'] },
    internalStructures: true,
  },
  resolve: { fn: () => [], arity: { 0: [] } },
};

/** Compiles once; throws when fhirpath.js cannot parse the expression. */
export function compileFhirPath(expression: string): Evaluator {
  const rewritten = expression.replace(RESOLVE_IS, `${REFERENCE_IS}('$1')`);
  const evaluate = fhirpath.compile(rewritten, r4Model, {
    resolveInternalTypes: false,
    userInvocationTable,
  });
  return (resource, emit) => {
    for (const item of evaluate(resource)) emitItem(item, emit);
  };
}

function emitItem(item: unknown, emit: Emit): void {
  if (isResourceNode(item)) {
    const type = nodeType(item);
    // fhirpath.js wraps JSON numbers it reaches directly (a decimal element) in FP_Decimal.
    const data = item.data instanceof fhirpath.FP_Decimal ? item.data.toNumber() : item.data;
    if (type !== undefined && data !== null && data !== undefined) emit(data, type);
  } else if (typeof item === 'boolean') {
    emit(item, 'boolean');
  } else if (typeof item === 'string') {
    emit(item, 'string');
  } else if (typeof item === 'number') {
    emit(item, Number.isInteger(item) ? 'integer' : 'decimal');
  }
  // Anything else (FHIRPath quantities, dates computed by the expression) is not FHIR data.
}

function nodeType(node: ResourceNode): string | undefined {
  const type = node.fhirNodeDataType;
  if (type) return SYSTEM_TYPES[type] ?? type;
  // fhirpath.js's R4 model does not know Graphir's own resources: use the element definitions.
  return node.path ? elementTypeAtPath(node.path, node.propName) : undefined;
}

function rootOf(node: ResourceNode): ResourceNode {
  let root = node;
  while (root.parentResNode) root = root.parentResNode;
  return root;
}

function isResourceNode(item: unknown): item is ResourceNode {
  return typeof item === 'object' && item !== null && 'fhirNodeDataType' in item && 'data' in item;
}
