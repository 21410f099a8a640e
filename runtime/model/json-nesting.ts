import { fhirError } from './fhir-error.js';

/**
 * JSON nested deeper than this is refused: JSON.parse copes with any depth, but the code that
 * walks a body afterwards (GraphQL's variable coercion, JSON.stringify, applying a JSON Patch)
 * recurses and overflows the stack some thousands of levels down. A FHIR resource is valid to
 * 100 object levels.
 */
export const MAX_JSON_NESTING = 500;

/** 400 when `value` (parsed JSON) nests objects and arrays more than MAX_JSON_NESTING deep. */
export function checkJsonNesting(value: unknown, what: string): void {
  // A stack rather than recursion: the point is to survive any depth.
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > MAX_JSON_NESTING)
      throw fhirError(400, 'structure', `${what} nests more than ${MAX_JSON_NESTING} levels deep`);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
}
