/**
 * Writes the search index of a set of resources: one DELETE per index table for the resources
 * that had an earlier version, one INSERT per table for all new values.
 */
import type { SearchIndexRows } from '../search/search-index.js';
import type { Queryable } from './database.js';
import { resourceKeysCondition } from './resource-keys.js';

export interface IndexEntry {
  readonly resourceType: string;
  readonly id: string;
  /** True when an earlier version's index rows must go. */
  readonly replacing: boolean;
  /** Absent for a deletion: its rows go and none come. */
  readonly index?: SearchIndexRows;
}

/** Each index table's value columns, as the JSON rows carry them and as SQL types them. */
const TABLES: Readonly<
  Record<
    keyof SearchIndexRows,
    { table: string; columns: Readonly<Record<string, [string, string]>> }
  >
> = {
  string: {
    table: 'search_string',
    columns: { value: ['value', 'text'], exact: ['exact', 'text'] },
  },
  token: {
    table: 'search_token',
    columns: { system: ['system', 'text'], value: ['value', 'text'], text: ['text', 'text'] },
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

export async function replaceSearchIndex(
  tx: Queryable,
  projectId: string,
  entries: readonly IndexEntry[],
): Promise<void> {
  const replaced = entries.filter((e) => e.replacing);
  for (const [kind, { table }] of Object.entries(TABLES)) {
    if (replaced.length > 0) {
      const values: unknown[] = [projectId];
      await tx.query(
        `DELETE FROM ${table} s WHERE s.project_id = $1 AND ${resourceKeysCondition('s', replaced, values)}`,
        values,
      );
    }
    await insertRows(tx, projectId, kind as keyof SearchIndexRows, entries);
  }
}

async function insertRows(
  tx: Queryable,
  projectId: string,
  kind: keyof SearchIndexRows,
  entries: readonly IndexEntry[],
): Promise<void> {
  const { table, columns } = TABLES[kind];
  const rows = entries.flatMap((entry) =>
    (entry.index?.[kind] ?? []).map((row) => {
      const values: Record<string, unknown> = {
        resource_type: entry.resourceType,
        id: entry.id,
        code: row.code,
      };
      for (const [column, [property]] of Object.entries(columns))
        values[column] = (row as unknown as Record<string, unknown>)[property];
      return values;
    }),
  );
  if (rows.length === 0) return;
  const names = ['resource_type', 'id', 'code', ...Object.keys(columns)];
  const types = [
    'resource_type text',
    'id text',
    'code text',
    ...Object.entries(columns).map(([c, [, type]]) => `${c} ${type}`),
  ];
  await tx.query(
    `INSERT INTO ${table} (project_id, ${names.join(', ')})
     SELECT $1, ${names.join(', ')} FROM jsonb_to_recordset($2::jsonb) AS x(${types.join(', ')})`,
    [projectId, JSON.stringify(rows)],
  );
}
