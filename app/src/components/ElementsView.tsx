/**
 * A resource's elements laid out for reading: names as words, nested elements indented, lists
 * numbered, references as links. The narrative (`text`) is left out: its XHTML is not shown as
 * markup, and the JSON tab has it; `meta`'s version and last update head the page already.
 */
import type { ReactNode } from 'react';
import type { Resource } from '../lib/fhir-types.js';
import { referenceHref } from '../lib/references.js';
import { Link } from './Link.js';

const HIDDEN = new Set(['resourceType', 'id', 'text', 'meta']);

export function ElementsView({ resource }: { readonly resource: Resource }) {
  const entries = Object.entries(resource).filter(([name]) => !HIDDEN.has(name));
  return <ElementList entries={entries} />;
}

function ElementList({ entries }: { readonly entries: readonly [string, unknown][] }) {
  return (
    <dl className="elements">
      {entries.map(([name, value]) => (
        <div key={name} className="element">
          <dt>{words(name)}</dt>
          <dd>{valueOf(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

function valueOf(value: unknown): ReactNode {
  if (Array.isArray(value)) {
    if (value.length === 1) return valueOf(value[0]);
    return (
      <ol className="element-list">
        {value.map((item, index) => (
          <li key={index}>{valueOf(item)}</li>
        ))}
      </ol>
    );
  }
  if (typeof value === 'object' && value !== null) {
    const object = value as Record<string, unknown>;
    const href = typeof object.reference === 'string' ? referenceHref(object.reference) : undefined;
    if (href)
      return (
        <>
          <Link href={href}>{object.reference as string}</Link>
          {typeof object.display === 'string' && ` (${object.display})`}
        </>
      );
    return <ElementList entries={Object.entries(object)} />;
  }
  return String(value);
}

/** `birthDate` → "Birth date". */
function words(name: string): string {
  const spaced = name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}
