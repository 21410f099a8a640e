/**
 * The plans PostgreSQL and PGlite run for search statements (EXPLAIN ANALYZE), read as trees:
 * for tests of how much a search reads, and of which source answered a walked page
 * (runtime/store/search-sql-walk.ts).
 */
import type { Database, Queryable } from '../../runtime/store/database.js';
import type { SqlQuery } from '../../runtime/store/search-sql.js';

export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Index Cond'?: string;
  readonly 'Recheck Cond'?: string;
  readonly 'One-Time Filter'?: string;
  readonly 'Parent Relationship'?: string;
  readonly 'Subplan Name'?: string;
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly Plans?: PlanNode[];
}

type ExplainRows = { rows: { 'QUERY PLAN': [{ Plan: PlanNode }] | string }[] };

/** The plan `query` ran with, run once. */
export async function explain(db: Queryable, query: SqlQuery): Promise<PlanNode> {
  return planOf(await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`, query.values));
}

/**
 * The plan `query` ran with as a prepared statement's kept plan, made without its values (the
 * generic plan PostgreSQL keeps after a few runs), run once.
 */
export async function explainKept(db: Database, query: SqlQuery): Promise<PlanNode> {
  return db.transaction(async (tx) => {
    await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await tx.query(`PREPARE kept_plan AS ${query.text}`);
    // EXECUTE takes its arguments as literals: a search's are texts and integers.
    const args = query.values.map((v) =>
      typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`,
    );
    const plan = planOf(
      await tx.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE kept_plan(${args.join(', ')})`),
    );
    await tx.query('DEALLOCATE kept_plan');
    return plan;
  });
}

/** EXPLAIN's JSON, parsed by PGlite or not by pg. */
function planOf({ rows }: ExplainRows): PlanNode {
  const json = rows[0]['QUERY PLAN'];
  return (typeof json === 'string' ? JSON.parse(json) : json)[0].Plan;
}

/** Every node of the plan, depth first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** Index rows read by the plan's scans of `table`, over all their loops. */
export function rowsRead(plan: PlanNode, table: string): number {
  return planNodes(plan)
    .filter((node) => node['Relation Name'] === table)
    .reduce((sum, node) => sum + node['Actual Rows'] * node['Actual Loops'], 0);
}

/**
 * Which source gave a walked page its rows: the walk, or the join it falls back to (run only when
 * its one-time filter, `NOT` the walk's answer, passes); undefined for a statement without a walk.
 */
export function walkedPageSource(plan: PlanNode): 'walk' | 'join' | undefined {
  const gate = planNodes(plan).find((node) => node['One-Time Filter']?.startsWith('(NOT '));
  if (gate === undefined) return undefined;
  const joined = gate.Plans?.find((child) => child['Parent Relationship'] === 'Outer');
  if (joined === undefined) throw new Error('the join’s gate has no plan under it');
  return joined['Actual Loops'] > 0 ? 'join' : 'walk';
}
