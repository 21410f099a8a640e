/**
 * What one version of a resource changed from the one before: a JSON Patch (rfc6902) between
 * them, read as element paths with the value before and after. The version id and last update,
 * which every version changes, are left out.
 */
import { createPatch, Pointer } from 'rfc6902';
import type { Resource } from './fhir-types.js';

export interface Change {
  readonly kind: 'added' | 'removed' | 'changed';
  /** `name[0].given[1]` */
  readonly path: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

const EVERY_VERSION = new Set(['/meta/versionId', '/meta/lastUpdated']);

export function changesBetween(before: Resource, after: Resource): Change[] {
  return createPatch(before, after)
    .filter((operation) => !EVERY_VERSION.has(operation.path))
    .map((operation): Change => {
      const path = readablePath(operation.path);
      const old = () => Pointer.fromJSON(operation.path).get(before);
      switch (operation.op) {
        case 'add':
          return { kind: 'added', path, after: operation.value };
        case 'remove':
          return { kind: 'removed', path, before: old() };
        case 'replace':
          return { kind: 'changed', path, before: old(), after: operation.value };
        default:
          // createPatch writes only add, remove and replace.
          return { kind: 'changed', path };
      }
    });
}

/** `/name/0/given/1` → `name[0].given[1]` */
function readablePath(pointer: string): string {
  return Pointer.fromJSON(pointer)
    .tokens.slice(1)
    .map((token) => (/^\d+$/.test(token) ? `[${token}]` : `.${token}`))
    .join('')
    .replace(/^\./, '');
}
