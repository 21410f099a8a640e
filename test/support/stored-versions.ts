import type { TestServer } from './test-server.js';

/** Every stored version (history rows) in a project: what a refused write must not change. */
export async function storedVersions(
  server: TestServer,
  projectId = server.project.projectId,
): Promise<number> {
  const { rows } = await server.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM resource_history WHERE project_id = $1',
    [projectId],
  );
  return Number(rows[0].n);
}
