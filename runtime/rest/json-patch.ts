/**
 * JSON Patch (RFC 6902) documents: read from a PATCH body or from a transaction entry's Binary,
 * checked, and applied to a resource with rfc6902 (the library Medplum's server uses). A
 * document that is not a well-formed patch is a 400; a well-formed one that cannot apply to the
 * resource (a `test` that fails, a path that does not exist) is a 422 (RFC 5789's
 * "unprocessable request"). Either way nothing is written.
 * @see http://hl7.org/fhir/R4/http.html#patch
 * @see https://www.rfc-editor.org/rfc/rfc6902
 */
import { applyPatch, Pointer, type Operation } from 'rfc6902';
import type { MissingError, TestError } from 'rfc6902/patch.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import { checkJsonNesting } from '../model/json-nesting.js';
import { isJsonPointer, MAX_JSON_POINTER_LENGTH } from './json-pointer.js';

export const JSON_PATCH = 'application/json-patch+json';

const OPERATIONS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);
/** Keys that would reach an object's prototype, never a FHIR element. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** The body of a PATCH as a JSON Patch: 400 unless it is an array of well-formed operations. */
export function parseJsonPatch(body: unknown): Operation[] {
  if (!Array.isArray(body))
    throw malformed('A JSON Patch document is an array of operations, not this');
  body.forEach(checkOperation);
  return body as Operation[];
}

/**
 * A transaction or batch entry's PATCH: a Binary whose `contentType` is JSON Patch and whose
 * `data` is the document in base64. FHIRPath Patch (a Parameters resource) is not supported.
 */
export function jsonPatchFromBinary(resource: FhirResource | undefined): Operation[] {
  if (resource?.resourceType !== 'Binary' || resource.contentType !== JSON_PATCH)
    throw fhirError(
      400,
      'not-supported',
      `A PATCH entry's resource must be a Binary whose contentType is ${JSON_PATCH} (FHIRPath Patch is not supported), not ${String(resource?.resourceType ?? 'missing')}`,
      'resource',
    );
  if (typeof resource.data !== 'string')
    throw fhirError(
      400,
      'required',
      'The Binary has no data: the JSON Patch in base64',
      'resource.data',
    );
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(resource.data, 'base64').toString('utf8'));
  } catch {
    throw fhirError(
      400,
      'structure',
      'The Binary data is not a JSON Patch in base64',
      'resource.data',
    );
  }
  checkJsonNesting(document, 'The JSON Patch');
  return parseJsonPatch(document);
}

/** `resource` as the patch leaves it, in a copy; 422 naming the operation that cannot apply. */
export function applyJsonPatch(resource: FhirResource, patch: readonly Operation[]): FhirResource {
  const patched = structuredClone(resource) as FhirResource;
  patch.forEach((operation, index) => {
    const where = `operation ${index} (${operation.op} ${operation.path})`;
    const missing = missingPath(patched, operation);
    if (missing !== undefined) throw unprocessable(`${where}: ${missing} does not exist`);
    // By name: rfc6902's error classes can reach here from another copy of its module.
    const [error] = applyPatch(patched, [operation]);
    if (error?.name === 'TestError') {
      const { actual, expected } = error as TestError;
      throw unprocessable(
        `${where}: the value is ${JSON.stringify(actual) ?? 'absent'}, not ${JSON.stringify(expected)}`,
      );
    }
    if (error?.name === 'MissingError')
      throw unprocessable(`${where}: ${(error as MissingError).path} does not exist`);
    if (error) throw malformed(`${where}: ${error.message}`);
  });
  return patched;
}

function checkOperation(operation: unknown, index: number): void {
  const at = `JSON Patch operation ${index}`;
  if (operation === null || typeof operation !== 'object' || Array.isArray(operation))
    throw malformed(`${at} is not an object`);
  const { op, path, from } = operation as Record<string, unknown>;
  if (typeof op !== 'string' || !OPERATIONS.has(op))
    throw malformed(
      `${at}: op must be add, remove, replace, move, copy or test, not ${JSON.stringify(op) ?? 'missing'}`,
    );
  checkPointer(path, `${at}: path`);
  if (path === '' && op !== 'test')
    throw malformed(`${at}: ${op} of the whole resource (path "") is not a patch; use PUT`);
  if (op === 'move' || op === 'copy') checkPointer(from, `${at}: from`);
  if ((op === 'add' || op === 'replace' || op === 'test') && !Object.hasOwn(operation, 'value'))
    throw malformed(`${at}: ${op} needs a value`);
}

function checkPointer(pointer: unknown, what: string): void {
  if (typeof pointer !== 'string' || !isJsonPointer(pointer))
    throw malformed(
      `${what} must be a JSON Pointer of at most ${MAX_JSON_POINTER_LENGTH} characters such as /name/0/family, not ${JSON.stringify(pointer)?.slice(0, 100) ?? 'missing'}`,
    );
  if (Pointer.fromJSON(pointer).tokens.some((token) => PROTOTYPE_KEYS.has(token)))
    throw malformed(`${what} ${pointer} names no element a resource can have`);
}

/**
 * The first part of the operation's paths that is not there, where rfc6902 would not say so
 * itself: a step into a string or number, or an array step that is not an index (`-`, the end
 * of the array, only where an operation adds).
 */
function missingPath(document: unknown, operation: Operation): string | undefined {
  const adds = operation.op === 'add' || operation.op === 'move' || operation.op === 'copy';
  const pointers: [string, boolean][] = [[operation.path, adds]];
  if ('from' in operation) pointers.push([operation.from, false]);
  for (const [pointer, mayAppend] of pointers) {
    const tokens = Pointer.fromJSON(pointer).tokens.slice(1);
    let value = document;
    for (const [depth, token] of tokens.entries()) {
      const reached = `/${tokens.slice(0, depth + 1).join('/')}`;
      if (value === undefined) break;
      if (value === null || typeof value !== 'object') return reached;
      const last = depth === tokens.length - 1;
      if (Array.isArray(value) && !ARRAY_INDEX.test(token) && !(mayAppend && last && token === '-'))
        return reached;
      value = (value as Record<string, unknown>)[token];
    }
  }
  return undefined;
}

function malformed(diagnostics: string) {
  return fhirError(400, 'structure', diagnostics);
}

function unprocessable(diagnostics: string) {
  return fhirError(422, 'processing', diagnostics);
}
