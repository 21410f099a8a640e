/**
 * Reads of current rows by (type, id), shared by every request in flight: the reads asked for
 * in one turn of the event loop go to the database as one statement per project. Under load a
 * server answers many requests at once, each reading one or a few resources (REST reads, a
 * GraphQL level's references, a Bot before it runs); one statement for all of them costs the
 * database and the driver about what one read costs, where a statement each made the database
 * the bottleneck. A lone request waits one event loop turn (microseconds).
 *
 * Outside transactions only: each read still sees everything committed before its request
 * asked, which is all a read outside a transaction promises.
 */
import type { FhirResource } from '../model/fhir-resource.js';
import type { Queryable } from './database.js';
import { resourceKey, resourceKeysCondition, type ResourceKey } from './resource-keys.js';

export interface CurrentRow {
  readonly deleted: boolean;
  readonly versionId: string;
  /** Absent for a deleted resource. */
  readonly content?: FhirResource;
}

interface Waiting {
  readonly keys: readonly ResourceKey[];
  resolve(rows: Map<string, CurrentRow>): void;
  reject(error: unknown): void;
}

/** Keys per statement: past this, the reads of one turn are split over several statements. */
const MAX_KEYS = 1000;

export class CurrentReads {
  private waiting = new Map<string, Waiting[]>();
  private scheduled = false;

  constructor(private readonly db: Queryable) {}

  /** The current row of each key that exists (deleted ones too), by `resourceKey`. */
  read(projectId: string, keys: readonly ResourceKey[]): Promise<Map<string, CurrentRow>> {
    if (keys.length === 0) return Promise.resolve(new Map());
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(projectId);
      if (list) list.push({ keys, resolve, reject });
      else this.waiting.set(projectId, [{ keys, resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const waiting = this.waiting;
    this.waiting = new Map();
    this.scheduled = false;
    for (const [projectId, list] of waiting) {
      for (const batch of batches(list)) void this.load(projectId, batch);
    }
  }

  private async load(projectId: string, batch: readonly Waiting[]): Promise<void> {
    const distinct = new Map<string, ResourceKey>();
    for (const { keys } of batch)
      for (const key of keys) distinct.set(resourceKey(key.resourceType, key.id), key);
    let found: Map<string, CurrentRow>;
    try {
      found = await this.select(projectId, [...distinct.values()]);
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    for (const waiting of batch) {
      const rows = new Map<string, CurrentRow>();
      for (const { resourceType, id } of waiting.keys) {
        const key = resourceKey(resourceType, id);
        const row = found.get(key);
        if (row) rows.set(key, row);
      }
      waiting.resolve(rows);
    }
  }

  private async select(
    projectId: string,
    keys: readonly ResourceKey[],
  ): Promise<Map<string, CurrentRow>> {
    const { text, values } = currentRowsQuery(projectId, keys);
    const { rows } = await this.db.query<{
      resource_type: string;
      id: string;
      deleted: boolean;
      version_id: string;
      content: FhirResource | null;
    }>(
      text,
      values,
      // The text depends only on how many types the keys have: a few dozen texts at most.
      { prepared: 'fixed' },
    );
    return new Map(
      rows.map((row) => [
        resourceKey(row.resource_type, row.id),
        {
          deleted: row.deleted,
          versionId: String(row.version_id),
          ...(row.content ? { content: row.content } : {}),
        },
      ]),
    );
  }
}

/** The waiting reads in groups of at most MAX_KEYS keys (a bigger read goes alone). */
function* batches(list: readonly Waiting[]): Generator<Waiting[]> {
  let batch: Waiting[] = [];
  let size = 0;
  for (const waiting of list) {
    if (batch.length > 0 && size + waiting.keys.length > MAX_KEYS) {
      yield batch;
      batch = [];
      size = 0;
    }
    batch.push(waiting);
    size += waiting.keys.length;
  }
  if (batch.length > 0) yield batch;
}

/** The statement that reads the current rows of `keys` (deleted ones too). */
export function currentRowsQuery(
  projectId: string,
  keys: readonly ResourceKey[],
): { readonly text: string; readonly values: unknown[] } {
  const values: unknown[] = [projectId];
  const text = `SELECT r.resource_type, r.id, r.deleted, r.version_id, r.content FROM resource r
        WHERE r.project_id = $1 AND ${resourceKeysCondition('r', keys, values)}`;
  return { text, values };
}
