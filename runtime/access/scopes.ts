/**
 * SMART on FHIR scopes for system clients: v2 (`system/Patient.rs`, `system/*.cruds`) and v1
 * (`system/*.read`, `system/Observation.write`, `system/Patient.*`), read into one form; and
 * Graphir's one operation scope, `system/Bot.$execute`, the permission to run bots (SMART names
 * no operations, and `system/*.cruds` must not include running code).
 * @see https://hl7.org/fhir/smart-app-launch/scopes-and-launch-context.html
 */

/** create, read, update, delete, search — SMART v2's letters. */
export type Interaction = 'c' | 'r' | 'u' | 'd' | 's';
/** What a scope grants on a type: an interaction, or running it (`$execute`, Bot only). */
export type Permission = Interaction | typeof EXECUTE;

export const EXECUTE = '$execute';
/** The scope that lets a client run bots (with read access to Bot). */
export const EXECUTE_SCOPE = `system/Bot.${EXECUTE}`;

const ORDER: readonly Interaction[] = ['c', 'r', 'u', 'd', 's'];
const V1: Readonly<Record<string, readonly Interaction[]>> = {
  read: ['r', 's'],
  write: ['c', 'u', 'd'],
  '*': ORDER,
};
const SCOPE = /^system\/(\*|[A-Z][A-Za-z]+)\.([a-z*]+|\$[a-z-]+)$/;

export class ScopeError extends Error {}

export class Scopes {
  private constructor(
    /** Resource type (or `*`) → allowed interactions. */
    private readonly grants: ReadonlyMap<string, ReadonlySet<Permission>>,
  ) {}

  static parse(text: string): Scopes {
    const grants = new Map<string, Set<Permission>>();
    for (const scope of text.split(/\s+/).filter(Boolean)) {
      const [type, permissions] = parseScope(scope);
      add(grants, type, permissions);
    }
    return new Scopes(grants);
  }

  /** The resource types the scopes name (`*` left out): for checking them against the known ones. */
  types(): string[] {
    return [...this.grants.keys()].filter((type) => type !== '*');
  }

  allows(resourceType: string, permission: Permission): boolean {
    return (
      this.grants.get(resourceType)?.has(permission) === true ||
      this.grants.get('*')?.has(permission) === true
    );
  }

  /** What both grant: a bot that runs as its caller gets its own scopes within the caller's. */
  intersect(other: Scopes): Scopes {
    const both = (type: string) =>
      [...this.permissionsOn(type)].filter((p) => other.permissionsOn(type).has(p));
    const grants = new Map<string, Set<Permission>>();
    const everyType = new Set(both('*'));
    add(grants, '*', everyType);
    // `*` stands for every type, named ones included: on a named type each side grants what it
    // names for it plus its `*`; what both grant on every type need not be named again.
    for (const type of new Set([...this.grants.keys(), ...other.grants.keys()]))
      if (type !== '*')
        add(
          grants,
          type,
          both(type).filter((p) => !everyType.has(p)),
        );
    return new Scopes(grants);
  }

  /** Everything either grants. */
  union(other: Scopes): Scopes {
    const grants = new Map<string, Set<Permission>>();
    for (const source of [this.grants, other.grants])
      for (const [type, permissions] of source) add(grants, type, permissions);
    return new Scopes(grants);
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

  /** SMART v2 text, sorted: `system/*.rs system/Bot.$execute system/Patient.cruds`. */
  toString(): string {
    return [...this.grants]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .flatMap(([type, set]) => {
        const letters = ORDER.filter((i) => set.has(i)).join('');
        return [
          ...(letters ? [`system/${type}.${letters}`] : []),
          ...(set.has(EXECUTE) ? [`system/${type}.${EXECUTE}`] : []),
        ];
      })
      .join(' ');
  }

  private permissionsOn(type: string): Set<Permission> {
    return new Set([...(this.grants.get(type) ?? []), ...(this.grants.get('*') ?? [])]);
  }
}

function add(
  grants: Map<string, Set<Permission>>,
  type: string,
  permissions: Iterable<Permission>,
): void {
  const set = grants.get(type) ?? new Set<Permission>();
  for (const permission of permissions) set.add(permission);
  if (set.size > 0) grants.set(type, set);
}

function parseScope(scope: string): [string, readonly Permission[]] {
  const match = SCOPE.exec(scope);
  if (!match) {
    throw new ScopeError(
      `"${scope}" is not a system scope (expected system/Type.cruds, system/Type.read, … or ${EXECUTE_SCOPE})`,
    );
  }
  const [, type, permissions] = match;
  if (permissions.startsWith('$')) {
    if (scope !== EXECUTE_SCOPE)
      throw new ScopeError(
        `"${scope}": the one operation scope is ${EXECUTE_SCOPE} (running bots)`,
      );
    return [type, [EXECUTE]];
  }
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
