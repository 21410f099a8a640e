/**
 * The PostgreSQL server tests use: GRAPHIR_TEST_DATABASE_URL (set by .ci/run, where it must
 * answer), else the local server on 127.0.0.1:5432 when one answers; without one, PostgreSQL
 * suites are skipped.
 */
import pg from 'pg';

const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const configuredUrl = process.env.GRAPHIR_TEST_DATABASE_URL;

let probed: Promise<string | undefined> | undefined;

/** The server's URL (of its default database), or undefined when none answers. */
export function postgresUrl(): Promise<string | undefined> {
  probed ??= (async () => {
    const url = configuredUrl ?? DEFAULT_POSTGRES_URL;
    try {
      await withAdmin(url, (admin) => admin.query('SELECT 1'));
      return url;
    } catch (error) {
      if (configuredUrl)
        throw new Error(
          `GRAPHIR_TEST_DATABASE_URL=${configuredUrl} does not answer: ${(error as Error).message}`,
        );
      return undefined;
    }
  })();
  return probed;
}

export async function withAdmin<T>(
  url: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** `url` with another database name. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function dropPostgresDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}
