import { once } from 'node:events';
import type { GraphQLSchema } from 'graphql';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { ClientRegistry } from '../access/client-registry.js';
import { TokenService } from '../access/token-service.js';
import { createApp } from '../http/app.js';
import { botIdentifierRule } from '../bots/bot-identifier-rule.js';
import { botScopeRule } from '../bots/bot-scope-rule.js';
import { prepareSubscription } from '../subscriptions/subscription-rule.js';
import { AuditLog } from '../bots/audit-log.js';
import { EgressClient } from '../egress/egress-client.js';
import { SandboxPool } from '../bots/sandbox-pool.js';
import { requestLimits, type Config } from './config.js';
import { buildExecutableSchema } from '../graphql/build-executable-schema.js';
import { answerClientError } from '../http/client-error.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { openJobQueue } from '../jobs/open-job-queue.js';
import { closeGracefully } from './shutdown.js';
import { listeningUrl } from './listening-url.js';
import { type Database } from '../store/database.js';
import { openDatabase } from '../store/open-database.js';
import { migrate } from '../store/migrate.js';
import { ClientStore } from '../store/client-store.js';
import { ResourceStore } from '../store/resource-store.js';
import { SigningKeyStore } from '../store/signing-key-store.js';

/** How long an idle keep-alive connection stays open. */
const KEEP_ALIVE_MS = 65_000;

export interface RunningServer {
  readonly url: string;
  /** Resolves when work that follows responses (AuditEvents, statistics, folding counts) is done. */
  settled(): Promise<void>;
  readonly db: Database;
  readonly store: ResourceStore;
  readonly schema: GraphQLSchema;
  readonly logger: Logger;
  /**
   * Stops accepting connections, stops the job queue's workers once their running jobs end, then
   * closes the sandbox pool and the database once queued work is done. `graceMs`: how long in-flight requests may run on (default 0: cut them off).
   */
  close(options?: { readonly graceMs?: number }): Promise<void>;
}

export interface StartOptions {
  /** An already open database (tests share one); otherwise the config says which to open. */
  readonly db?: Database;
  /** Where log lines go; by default pino to stdout at `LOG_LEVEL`, in batches of `LOG_BUFFER_BYTES`. */
  readonly logger?: Logger;
  readonly metrics?: Metrics;
}

/** Prepares everything the routes need (schema, database, migrations), then listens: once it answers, it is ready. */
export async function startServer(
  config: Config,
  options: StartOptions = {},
): Promise<RunningServer> {
  // Opening the database is mostly waiting (WASM compilation, connecting): start it first and
  // build the schema meanwhile.
  const opening = options.db ? Promise.resolve(options.db) : openConfiguredDatabase(config);
  const schema = buildExecutableSchema();
  const db = await opening;
  await migrate(db);
  const logger = options.logger ?? createLogger({ bufferBytes: config.logBufferBytes });
  const store = new ResourceStore(
    db,
    { rules: [botScopeRule, botIdentifierRule], preparers: [prepareSubscription] },
    (work, error, context) =>
      logger.warn(
        { ...context, work, err: error },
        'background upkeep failed; it is tried again later',
      ),
  );
  // Fresh statistics help the first searches; they need not delay readiness.
  store.statistics.analyzeInBackground();
  const clients = new ClientRegistry(new ClientStore(db), db.notices);
  const root = await clients.ensureRootClient(config.rootClientId, config.rootClientSecret);
  if (root) {
    // Printed once: the store keeps only the secret's hash.
    console.log(
      `Created the root client. client_id=${root.clientId} client_secret=${root.clientSecret} (shown once; keep it safe)`,
    );
  }
  const tokens = await TokenService.open(new SigningKeyStore(db), config.tokenLifetimeSeconds);
  const pool = new SandboxPool({ size: config.botWorkers });
  const audit = new AuditLog(store);
  const egress = new EgressClient(config.egress);
  const metrics = options.metrics ?? new Metrics();
  const jobs = openJobQueue(db, config.jobs, { logger, metrics });
  const app = createApp({
    limits: requestLimits(config),
    schema,
    store,
    clients,
    tokens,
    pool,
    audit,
    jobs,
    egress,
    logger,
    metrics,
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
    corsOrigins: config.corsOrigins,
    ...(config.appDir ? { appDir: config.appDir } : {}),
  });
  // Every process runs jobs, its own and those other processes left; the kinds are defined now.
  await jobs.start();
  const server = app.listen(config.port, config.host);
  server.on('clientError', answerClientError);
  // Node closes an idle keep-alive connection after 5 s, about when clients (fetch, proxies) may
  // send the next request on it: that request then fails with a reset connection. A minute, as
  // load balancers expect of what sits behind them.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1_000;
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: listeningUrl(config.host, port),
    db,
    schema,
    store,
    logger,
    settled: async () => {
      await audit.settled();
      await store.statistics.settled();
      await store.tokenCounts.settled();
    },
    close: async ({ graceMs = 0 } = {}) => {
      await closeGracefully(server, graceMs);
      // Running jobs end before the sandbox pool and the database they use are closed.
      await jobs.stop();
      await pool.close();
      await egress.close();
      await audit.settled();
      await store.statistics.settled();
      await store.tokenCounts.settled();
      if (!options.db) await db.close();
    },
  };
}

function openConfiguredDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    return openDatabase({
      url: config.databaseUrl,
      ...(config.databaseDirectUrl ? { directUrl: config.databaseDirectUrl } : {}),
      poolSize: config.databasePoolSize,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      idleTimeoutMs: config.databaseIdleTimeoutSeconds * 1000,
    });
  }
  mkdirSync(config.dataDir, { recursive: true });
  return openDatabase({ dataDir: config.dataDir });
}
