/** References in a resource, and where the app shows what they name. */
import { resourceHref } from './route.js';

export interface FoundReference {
  /** Where in the resource: `subject`, `result/0`. */
  readonly path: string;
  readonly reference: string;
  readonly display?: string;
}

/** Every `reference` string in a resource, with the path of the Reference holding it. */
export function referencesIn(value: unknown, path: string[] = []): FoundReference[] {
  if (Array.isArray(value))
    return value.flatMap((item, index) => referencesIn(item, [...path, String(index)]));
  if (typeof value !== 'object' || value === null) return [];
  const object = value as Record<string, unknown>;
  const own =
    typeof object.reference === 'string'
      ? [
          {
            path: path.join('.'),
            reference: object.reference,
            ...(typeof object.display === 'string' ? { display: object.display } : {}),
          },
        ]
      : [];
  return [
    ...own,
    ...Object.entries(object).flatMap(([name, child]) =>
      name === 'reference' ? [] : referencesIn(child, [...path, name]),
    ),
  ];
}

/** The app's page for a relative reference (`Patient/123`, `Patient/123/_history/2`). */
export function referenceHref(reference: string): string | undefined {
  const match = /^([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})(\/_history\/[^/]+)?$/.exec(reference);
  return match ? resourceHref(match[1], match[2]) : undefined;
}
