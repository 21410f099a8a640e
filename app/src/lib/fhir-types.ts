/** The shapes of FHIR JSON the app reads; resources stay plain JSON objects. */

export interface Resource {
  readonly resourceType: string;
  readonly id?: string;
  readonly meta?: { readonly versionId?: string; readonly lastUpdated?: string };
  readonly [element: string]: unknown;
}

export interface BundleLink {
  readonly relation: string;
  readonly url: string;
}

export interface BundleEntry {
  readonly fullUrl?: string;
  readonly resource?: Resource;
  readonly request?: { readonly method: string; readonly url: string };
  readonly response?: { readonly status: string; readonly outcome?: Resource };
  readonly search?: { readonly mode?: string };
}

export interface Bundle extends Resource {
  readonly resourceType: 'Bundle';
  readonly type: string;
  readonly total?: number;
  readonly link?: readonly BundleLink[];
  readonly entry?: readonly BundleEntry[];
}

/** A short name for a resource in lists: its name, title, code or description, else nothing. */
export function displayName(resource: Resource): string | undefined {
  const name = resource.name;
  if (typeof name === 'string') return name;
  if (Array.isArray(name) && name.length > 0) {
    const first = name[0] as { text?: string; given?: string[]; family?: string };
    const text = first.text ?? [...(first.given ?? []), first.family].filter(Boolean).join(' ');
    if (text) return text;
  }
  if (typeof resource.title === 'string') return resource.title;
  const code = resource.code as
    { text?: string; coding?: { display?: string; code?: string }[] } | undefined;
  const coded = code?.text ?? code?.coding?.[0]?.display ?? code?.coding?.[0]?.code;
  if (coded) return coded;
  if (typeof resource.description === 'string') return resource.description;
  return undefined;
}
