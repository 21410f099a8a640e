/** Server configuration from the environment; see the README's configuration table. */
import { availableParallelism } from 'node:os';
import type { RequestLimits } from '../http/app.js';
import type { CorsOrigins } from '../http/cors.js';
import type { JobSettings } from '../jobs/job-queue.js';
import { EgressPolicy } from '../egress/egress-policy.js';

export interface Config {
  readonly port: number;
  readonly host: string;
  /**
   * The public root URL clients reach the server at (`https://fhir.example.org`), without a
   * trailing slash: tokens' issuer, and with `/fhir/R4` their audience. When absent, each
   * request's origin (runtime/http/server-identity.ts).
   */
  readonly baseUrl?: string;
  /** PostgreSQL server URL; when absent, embedded PostgreSQL (PGlite) in `dataDir`. */
  readonly databaseUrl?: string;
  /**
   * The same database without a pooler in between, when `databaseUrl` goes through one in
   * transaction mode (PgBouncer): what needs a session of its own (LISTEN, the job queue)
   * connects here, and statements through the pooler are never kept prepared (docs/scale-out.md).
   */
  readonly databaseDirectUrl?: string;
  /** Server processes on the one port (serve.ts); more than one needs PostgreSQL. */
  readonly processes: number;
  /**
   * PostgreSQL: connections per process, how long to wait to connect or for a free one, and how
   * long an idle connection stays open.
   */
  readonly databasePoolSize: number;
  readonly databaseConnectTimeoutMs: number;
  readonly databaseIdleTimeoutSeconds: number;
  readonly dataDir: string;
  readonly maxBodyBytes: number;
  /** Page size of a search without `_count`, and the largest `_count` honoured. */
  readonly defaultPageSize: number;
  readonly maxPageSize: number;
  readonly rootClientId?: string;
  readonly rootClientSecret?: string;
  readonly tokenLifetimeSeconds: number;
  /** GraphQL limits, checked before a query runs. */
  readonly graphqlMaxDepth: number;
  readonly graphqlMaxCost: number;
  readonly graphqlMaxSearches: number;
  readonly graphqlMaxQueryBytes: number;
  readonly graphqlMaxTokens: number;
  readonly graphqlFhirpathBudgetMs: number;
  /** Bot time limit when the Bot sets none, the most a Bot may set, and memory per execution. */
  readonly botTimeoutSeconds: number;
  readonly botMaxTimeoutSeconds: number;
  readonly botMemoryBytes: number;
  /** Worker threads running bots; per project, executions at once and waiting for a place. */
  readonly botWorkers: number;
  readonly botProjectConcurrency: number;
  readonly botProjectQueue: number;
  /** The job queue (runtime/jobs/): jobs run at once per process, poll interval, attempts. */
  readonly jobs: JobSettings;
  /** Bytes of log lines gathered for one write to stdout; 0: each line at once (logger.ts). */
  readonly logBufferBytes: number;
  /** Web origins whose scripts may call the API (CORS): `*`, or these exactly. */
  readonly corsOrigins: CorsOrigins;
  /**
   * Where requests the server sends for a project (a bot's `fetch`) may connect besides public
   * addresses: GRAPHIR_EGRESS_ALLOW (runtime/egress/egress-policy.ts).
   */
  readonly egress: EgressPolicy;
  /** Where the built web app is (GRAPHIR_APP_DIR); by default dist/app of this package. */
  readonly appDir?: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const rootId = env.GRAPHIR_ROOT_CLIENT_ID || undefined;
  const rootSecret = env.GRAPHIR_ROOT_CLIENT_SECRET || undefined;
  if (Boolean(rootId) !== Boolean(rootSecret)) {
    throw new Error('Set both GRAPHIR_ROOT_CLIENT_ID and GRAPHIR_ROOT_CLIENT_SECRET, or neither');
  }
  if (env.DATABASE_DIRECT_URL && !env.DATABASE_URL) {
    throw new Error(
      'DATABASE_DIRECT_URL is the direct way to the database of DATABASE_URL: set both',
    );
  }
  const processes = serverProcesses(env);
  return {
    processes,
    port: integer('PORT', env.PORT ?? '8080', 0, 65535),
    host: env.HOST ?? '0.0.0.0',
    ...(env.GRAPHIR_BASE_URL ? { baseUrl: publicRootUrl(env.GRAPHIR_BASE_URL) } : {}),
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
    ...(env.DATABASE_DIRECT_URL ? { databaseDirectUrl: env.DATABASE_DIRECT_URL } : {}),
    databasePoolSize: integer('DATABASE_POOL_SIZE', env.DATABASE_POOL_SIZE ?? '10', 1, 1000),
    databaseConnectTimeoutMs: integer(
      'DATABASE_CONNECT_TIMEOUT_MS',
      env.DATABASE_CONNECT_TIMEOUT_MS ?? '10000',
      1,
      600_000,
    ),
    databaseIdleTimeoutSeconds: integer(
      'DATABASE_IDLE_TIMEOUT_SECONDS',
      env.DATABASE_IDLE_TIMEOUT_SECONDS ?? '600',
      1,
      86_400,
    ),
    dataDir: env.DATA_DIR ?? './data',
    maxBodyBytes: integer(
      'GRAPHIR_MAX_BODY_BYTES',
      env.GRAPHIR_MAX_BODY_BYTES ?? String(16 * 1024 * 1024),
      1,
      2 ** 31,
    ),
    defaultPageSize: integer(
      'GRAPHIR_DEFAULT_PAGE_SIZE',
      env.GRAPHIR_DEFAULT_PAGE_SIZE ?? '20',
      1,
      10_000,
    ),
    maxPageSize: integer('GRAPHIR_MAX_PAGE_SIZE', env.GRAPHIR_MAX_PAGE_SIZE ?? '1000', 1, 10_000),
    ...(rootId && rootSecret ? { rootClientId: rootId, rootClientSecret: rootSecret } : {}),
    graphqlMaxDepth: integer(
      'GRAPHIR_GRAPHQL_MAX_DEPTH',
      env.GRAPHIR_GRAPHQL_MAX_DEPTH ?? '15',
      1,
      1000,
    ),
    graphqlMaxCost: integer(
      'GRAPHIR_GRAPHQL_MAX_COST',
      env.GRAPHIR_GRAPHQL_MAX_COST ?? '100000',
      1,
      1e9,
    ),
    graphqlMaxSearches: integer(
      'GRAPHIR_GRAPHQL_MAX_SEARCHES',
      env.GRAPHIR_GRAPHQL_MAX_SEARCHES ?? '20',
      1,
      10_000,
    ),
    graphqlMaxQueryBytes: integer(
      'GRAPHIR_GRAPHQL_MAX_QUERY_BYTES',
      env.GRAPHIR_GRAPHQL_MAX_QUERY_BYTES ?? String(256 * 1024),
      1,
      16 * 1024 * 1024,
    ),
    graphqlMaxTokens: integer(
      'GRAPHIR_GRAPHQL_MAX_TOKENS',
      env.GRAPHIR_GRAPHQL_MAX_TOKENS ?? '20000',
      1,
      10_000_000,
    ),
    graphqlFhirpathBudgetMs: integer(
      'GRAPHIR_GRAPHQL_FHIRPATH_BUDGET_MS',
      env.GRAPHIR_GRAPHQL_FHIRPATH_BUDGET_MS ?? '50',
      1,
      60_000,
    ),
    botTimeoutSeconds: integer(
      'GRAPHIR_BOT_TIMEOUT_SECONDS',
      env.GRAPHIR_BOT_TIMEOUT_SECONDS ?? '10',
      1,
      3600,
    ),
    botMaxTimeoutSeconds: integer(
      'GRAPHIR_BOT_MAX_TIMEOUT_SECONDS',
      env.GRAPHIR_BOT_MAX_TIMEOUT_SECONDS ?? '60',
      1,
      3600,
    ),
    botMemoryBytes:
      integer('GRAPHIR_BOT_MEMORY_MB', env.GRAPHIR_BOT_MEMORY_MB ?? '64', 8, 4096) * 1024 * 1024,
    ...botPlaces(env, processes),
    jobs: {
      concurrency: integer('GRAPHIR_JOBS_CONCURRENCY', env.GRAPHIR_JOBS_CONCURRENCY ?? '8', 1, 256),
      pollIntervalMs: integer(
        'GRAPHIR_JOBS_POLL_INTERVAL_MS',
        env.GRAPHIR_JOBS_POLL_INTERVAL_MS ?? '2000',
        10,
        600_000,
      ),
      maxAttempts: integer(
        'GRAPHIR_JOBS_MAX_ATTEMPTS',
        env.GRAPHIR_JOBS_MAX_ATTEMPTS ?? '5',
        1,
        100,
      ),
    },
    logBufferBytes: integer('LOG_BUFFER_BYTES', env.LOG_BUFFER_BYTES ?? '4096', 0, 16_000),
    corsOrigins: corsOrigins(env.GRAPHIR_CORS_ORIGINS ?? '*'),
    ...(env.GRAPHIR_APP_DIR ? { appDir: env.GRAPHIR_APP_DIR } : {}),
    egress: env.GRAPHIR_EGRESS_ALLOW
      ? EgressPolicy.parse(env.GRAPHIR_EGRESS_ALLOW)
      : EgressPolicy.DEFAULT,
    tokenLifetimeSeconds: integer(
      'GRAPHIR_TOKEN_LIFETIME_SECONDS',
      env.GRAPHIR_TOKEN_LIFETIME_SECONDS ?? '3600',
      1,
      86_400 * 30,
    ),
  };
}

/**
 * One per core on PostgreSQL, where processes share the database; one on the embedded store, whose
 * data directory only one process may open.
 */
function serverProcesses(env: NodeJS.ProcessEnv): number {
  const processes = integer(
    'GRAPHIR_PROCESSES',
    env.GRAPHIR_PROCESSES || (env.DATABASE_URL ? String(availableParallelism()) : '1'),
    1,
    256,
  );
  if (processes > 1 && !env.DATABASE_URL) {
    throw new Error(
      `GRAPHIR_PROCESSES (--processes) is ${processes}, but the embedded store (PGlite, no DATABASE_URL) is one process's data directory: serve one process, or set DATABASE_URL to a PostgreSQL server`,
    );
  }
  return processes;
}

/**
 * The machine's cores shared by the server processes, rounded up: each process one worker per
 * core by default, not each process one per core (N processes would start N times the threads
 * for the same cores). A project runs at most one worker fewer at once, so that another
 * project's bot always finds one in that process (runtime/bots/project-scheduler.ts).
 */
function botPlaces(env: NodeJS.ProcessEnv, processes: number) {
  const botWorkers = integer(
    'GRAPHIR_BOT_WORKERS',
    env.GRAPHIR_BOT_WORKERS ?? String(Math.ceil(availableParallelism() / processes)),
    1,
    256,
  );
  return {
    botWorkers,
    botProjectConcurrency: integer(
      'GRAPHIR_BOT_PROJECT_CONCURRENCY',
      env.GRAPHIR_BOT_PROJECT_CONCURRENCY ?? String(Math.max(1, botWorkers - 1)),
      1,
      256,
    ),
    botProjectQueue: integer(
      'GRAPHIR_BOT_PROJECT_QUEUE',
      env.GRAPHIR_BOT_PROJECT_QUEUE ?? '100',
      0,
      100_000,
    ),
  };
}

/** The limits each request is held to. */
export function requestLimits(config: Config): RequestLimits {
  return {
    maxBodyBytes: config.maxBodyBytes,
    search: { defaultCount: config.defaultPageSize, maxCount: config.maxPageSize },
    query: {
      maxDepth: config.graphqlMaxDepth,
      maxCost: config.graphqlMaxCost,
      maxSearches: config.graphqlMaxSearches,
      maxQueryBytes: config.graphqlMaxQueryBytes,
      maxTokens: config.graphqlMaxTokens,
      fhirpathBudgetMs: config.graphqlFhirpathBudgetMs,
      maxPageSize: config.maxPageSize,
      defaultPageSize: config.defaultPageSize,
    },
    bots: {
      defaultTimeoutSeconds: config.botTimeoutSeconds,
      maxTimeoutSeconds: config.botMaxTimeoutSeconds,
      memoryBytes: config.botMemoryBytes,
    },
    botsPerProject: { concurrency: config.botProjectConcurrency, queued: config.botProjectQueue },
  };
}

/**
 * An absolute http(s) URL, perhaps with a path (a proxy's prefix), in URL's normal form without
 * a trailing slash. The FHIR path is refused: the audience would name it twice.
 */
function publicRootUrl(text: string): string {
  const refuse = (why: string) =>
    new Error(`GRAPHIR_BASE_URL must be ${why}, such as https://fhir.example.org, not "${text}"`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refuse('an absolute http or https URL');
  if (/[?#]/.test(text) || url.username || url.password)
    throw refuse('a URL without query, fragment or credentials');
  const path = url.pathname.replace(/(?<!\/)\/+$/, '');
  if (/\/fhir\/R4$/i.test(path)) throw refuse('the server root, without /fhir/R4');
  return `${url.origin}${path}`;
}

/**
 * `*`, or a comma-separated list of origins written as browsers send them in `Origin`
 * (`https://app.example.com`, `http://localhost:3000`): compared exactly, so a path, a trailing
 * slash, upper case or a default port would never match, and is refused here instead.
 */
function corsOrigins(text: string): CorsOrigins {
  if (text.trim() === '*') return '*';
  const origins = text.split(',').map((origin) => origin.trim());
  for (const origin of origins) {
    const problem = originProblem(origin);
    if (problem) {
      throw new Error(
        `GRAPHIR_CORS_ORIGINS must be * or a comma-separated list of origins (scheme://host[:port]), not "${text}": ${problem}`,
      );
    }
  }
  return origins;
}

function originProblem(origin: string): string | undefined {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `"${origin}" is not an origin`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `"${origin}" is not an http or https origin`;
  if (url.origin !== origin) return `"${origin}" is not an origin; did you mean ${url.origin}?`;
  return undefined;
}

function integer(name: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${text}"`);
  }
  return value;
}
