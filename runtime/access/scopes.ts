/**
 * SMART on FHIR scopes for system clients: v2 (`system/Patient.rs`, `system/*.cruds`) and v1
 * (`system/*.read`, `system/Observation.write`, `system/Patient.*`), read into one form.
 * @see https://hl7.org/fhir/smart-app-launch/scopes-and-launch-context.html
 */

/** create, read, update, delete, search — SMART v2's letters. */
export type Interaction = 'c' | 'r' | 'u' | 'd' | 's';

const ORDER: readonly Interaction[] = ['c', 'r', 'u', 'd', 's'];
const V1: Readonly<Record<string, readonly Interaction[]>> = {
  read: ['r', 's'],
  write: ['c', 'u', 'd'],
  '*': ORDER,
};
const SCOPE = /^system\/(\*|[A-Z][A-Za-z]+)\.([a-z*]+)$/;

export class ScopeError extends Error {}

export class Scopes {
  private constructor(
    /** Resource type (or `*`) → allowed interactions. */
    private readonly grants: ReadonlyMap<string, ReadonlySet<Interaction>>,
  ) {}

  static parse(text: string): Scopes {
    const grants = new Map<string, Set<Interaction>>();
    for (const scope of text.split(/\s+/).filter(Boolean)) {
      const [type, interactions] = parseScope(scope);
      const set = grants.get(type) ?? new Set<Interaction>();
      for (const interaction of interactions) set.add(interaction);
      grants.set(type, set);
    }
    return new Scopes(grants);
  }

  /** The resource types the scopes name (`*` left out): for checking them against the known ones. */
  types(): string[] {
    return [...this.grants.keys()].filter((type) => type !== '*');
  }

  allows(resourceType: string, interaction: Interaction): boolean {
    return (
      this.grants.get(resourceType)?.has(interaction) === true ||
      this.grants.get('*')?.has(interaction) === true
    );
  }

  /** True when every grant of `other` is also granted here. */
  covers(other: Scopes): boolean {
    for (const [type, interactions] of other.grants) {
      for (const interaction of interactions) {
        const ok =
          type === '*'
            ? this.grants.get('*')?.has(interaction) === true
            : this.allows(type, interaction);
        if (!ok) return false;
      }
    }
    return true;
  }

  /** SMART v2 text, sorted: `system/*.rs system/Patient.cruds`. */
  toString(): string {
    return [...this.grants]
      .filter(([, set]) => set.size > 0)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([type, set]) => `system/${type}.${ORDER.filter((i) => set.has(i)).join('')}`)
      .join(' ');
  }
}

function parseScope(scope: string): [string, readonly Interaction[]] {
  const match = SCOPE.exec(scope);
  if (!match) {
    throw new ScopeError(
      `"${scope}" is not a system scope (expected system/Type.cruds or system/Type.read, …)`,
    );
  }
  const [, type, permissions] = match;
  const v1 = V1[permissions];
  if (v1) return [type, v1];
  const letters = [...permissions];
  const inOrder = letters.every(
    (l, i) =>
      ORDER.includes(l as Interaction) &&
      (i === 0 || ORDER.indexOf(l as Interaction) > ORDER.indexOf(letters[i - 1] as Interaction)),
  );
  if (!inOrder) {
    throw new ScopeError(
      `"${scope}": permissions are the letters c, r, u, d, s in that order, or read, write or *`,
    );
  }
  return [type, letters as Interaction[]];
}
