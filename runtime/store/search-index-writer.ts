/**
 * The search index of a set of resources, as parts of one SQL statement: one DELETE per index
 * table for the resources that had an earlier version, one INSERT per table for all new values,
 * and the changes of the kept token counts those make (token-count-writes.ts). Every row carries
 * the version it indexes and that version's last update: searches page by them without reading
 * resource rows (search-sql.ts).
 */
import type { SearchIndexRows } from '../search/search-index.js';
import { resourceKeysCondition } from './resource-keys.js';
import { COUNTED_COLUMNS, tokenCountDeltas } from './token-count-writes.js';

export interface IndexEntry {
  readonly resourceType: string;
  readonly id: string;
  /** The version indexed; for a deletion, the deleting version (no rows carry it). */
  readonly versionId: number;
  /** True when an earlier version's index rows must go. */
  readonly replacing: boolean;
  /** Absent for a deletion: its rows go and none come. */
  readonly index?: SearchIndexRows;
}

interface TableColumns {
  readonly table: string;
  readonly columns: Readonly<Record<string, [string, string]>>;
  /** Whose rows the kept counts count (migrations/014): they are kept in step here. */
  readonly counted?: true;
}

/** Each index table's value columns, as the JSON rows carry them and as SQL types them. */
const TABLES: Readonly<Record<keyof SearchIndexRows, TableColumns>> = {
  string: {
    table: 'search_string',
    columns: { value: ['value', 'text'], exact: ['exact', 'text'] },
  },
  token: {
    table: 'search_token',
    columns: { system: ['system', 'text'], value: ['value', 'text'], text: ['text', 'text'] },
    counted: true,
  },
  reference: {
    table: 'search_reference',
    columns: {
      target_type: ['targetType', 'text'],
      target_id: ['targetId', 'text'],
      url: ['url', 'text'],
    },
  },
  date: {
    table: 'search_date',
    columns: { start_at: ['start', 'timestamptz'], end_at: ['end', 'timestamptz'] },
  },
  number: { table: 'search_number', columns: { value: ['value', 'numeric'] } },
  quantity: {
    table: 'search_quantity',
    columns: { value: ['value', 'numeric'], system: ['system', 'text'], unit: ['unit', 'text'] },
  },
  uri: { table: 'search_uri', columns: { value: ['value', 'text'] } },
};

/**
 * Data-modifying CTEs (`name AS (DELETE …)`, `name AS (INSERT …)`) that replace the search index
 * of `entries`, for the caller to put in one statement with the version rows; their parameters
 * are appended to `values`. In one statement every part sees the same snapshot, so each DELETE
 * removes only the earlier rows, never the ones inserted beside it; the rows of a counted table
 * that the DELETE and the INSERT return are what its counts change by. `project` is the placeholder
 * of the project id's parameter (e.g. `$2`); `lastUpdated` is the versions' last update, the same
 * for every resource of one write.
 */
export function searchIndexWrites(
  project: string,
  lastUpdated: string,
  entries: readonly IndexEntry[],
  values: unknown[],
): string[] {
  const replaced = entries.filter((e) => e.replacing);
  const ctes: string[] = [];
  // A parameter only when some row uses it: PostgreSQL cannot type one that nothing references.
  let lastUpdatedParam: string | undefined;
  const lastUpdatedOnce = () => (lastUpdatedParam ??= `$${values.push(lastUpdated)}`);
  for (const [kind, { table, counted }] of Object.entries(TABLES) as [
    keyof SearchIndexRows,
    TableColumns,
  ][]) {
    const returning = counted ? ` RETURNING ${COUNTED_COLUMNS}` : '';
    const deleted = replaced.length > 0 ? `delete_${kind}` : undefined;
    if (deleted) {
      ctes.push(
        `${deleted} AS (DELETE FROM ${table} s WHERE s.project_id = ${project}::text AND ${resourceKeysCondition('s', replaced, values)}${returning})`,
      );
    }
    const insert = insertRows(kind, entries, values, project, lastUpdatedOnce);
    const inserted = insert ? `insert_${kind}` : undefined;
    if (inserted) ctes.push(`${inserted} AS (${insert}${returning})`);
    if (counted) ctes.push(...tokenCountDeltas(project, { deleted, inserted }));
  }
  return ctes;
}

function insertRows(
  kind: keyof SearchIndexRows,
  entries: readonly IndexEntry[],
  values: unknown[],
  project: string,
  lastUpdated: () => string,
): string | undefined {
  const { table, columns } = TABLES[kind];
  const rows = entries.flatMap((entry) =>
    (entry.index?.[kind] ?? []).map((row) => {
      const values: Record<string, unknown> = {
        resource_type: entry.resourceType,
        id: entry.id,
        version_id: entry.versionId,
        code: row.code,
      };
      for (const [column, [property]] of Object.entries(columns))
        values[column] = (row as unknown as Record<string, unknown>)[property];
      return values;
    }),
  );
  if (rows.length === 0) return undefined;
  const names = ['resource_type', 'id', 'version_id', 'code', ...Object.keys(columns)];
  const types = [
    'resource_type text',
    'id text',
    'version_id bigint',
    'code text',
    ...Object.entries(columns).map(([c, [, type]]) => `${c} ${type}`),
  ];
  const lastUpdatedParam = lastUpdated();
  values.push(JSON.stringify(rows));
  return `INSERT INTO ${table} (project_id, last_updated, ${names.join(', ')})
     SELECT ${project}::text, ${lastUpdatedParam}::timestamptz, ${names.join(', ')} FROM jsonb_to_recordset($${values.length}::jsonb) AS x(${types.join(', ')})`;
}
