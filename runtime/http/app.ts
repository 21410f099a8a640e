import Koa, { type Middleware } from 'koa';
import type { GraphQLSchema } from 'graphql';
import type { ClientRegistry } from '../access/client-registry.js';
import type { TokenService } from '../access/token-service.js';
import { BotRunner, type BotLimits } from '../bots/bot-runner.js';
import type { AuditLog } from '../bots/audit-log.js';
import type { EgressClient } from '../egress/egress-client.js';
import { ProjectScheduler, type SchedulerLimits } from '../bots/project-scheduler.js';
import type { SandboxPool } from '../bots/sandbox-pool.js';
import type { QueryLimits } from '../graphql/query-limits.js';
import type { SearchLimits } from '../rest/search-request.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { adminRoutes } from './admin-routes.js';
import { appRoutes } from './app-routes.js';
import { AsyncExecutions } from './async-execution.js';
import { startSubscriptions } from '../subscriptions/subscriptions.js';
import { auditVisibility } from './audit-visibility.js';
import { botRoutes } from './bot-routes.js';
import { compression } from './compression.js';
import { corsHeaders, type CorsOrigins } from './cors.js';
import { errorMiddleware, outcomeWhenUnanswered } from './error-middleware.js';
import { jsonBodyParser } from './fhir-body.js';
import { noStore } from './no-store.js';
import { FHIR_BASE } from '../model/fhir-base.js';
import { fhirRoutes } from './rest-routes.js';
import { graphqlResponses } from './graphql-response.js';
import { graphqlRoutes } from './graphql-routes.js';
import { healthRoutes } from './health-routes.js';
import { isPlaygroundRequest, playgroundRoutes } from './playground-routes.js';
import { requireToken } from './require-token.js';
import { serverIdentity } from './server-identity.js';
import { tokenRoutes } from './token-routes.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { metricsRoutes } from './metrics-routes.js';
import { requestLogging, type RequestState } from './request-logging.js';
import { DatabaseUnavailableError } from '../store/database-errors.js';
import type { ResourceStore } from '../store/resource-store.js';

/** What each request is held to; the server reads them from its configuration. */
export interface RequestLimits {
  readonly maxBodyBytes: number;
  readonly search: SearchLimits;
  readonly query: QueryLimits;
  readonly bots: BotLimits;
  readonly botsPerProject: SchedulerLimits;
}

export interface AppDependencies {
  readonly limits: RequestLimits;
  readonly schema: GraphQLSchema;
  readonly store: ResourceStore;
  readonly clients: ClientRegistry;
  readonly tokens: TokenService;
  readonly pool: SandboxPool;
  readonly audit: AuditLog;
  /** Where background work goes: `Prefer: respond-async` and Subscriptions define their job kinds here, before it starts. */
  readonly jobs: JobQueue;
  /** Where a bot's `fetch` may connect (GRAPHIR_EGRESS_ALLOW). */
  readonly egress: EgressClient;
  /** Request lines, internal errors and bot console output; by default pino at `LOG_LEVEL`. */
  readonly logger?: Logger;
  /** Served at `GET /metrics`; by default a fresh registry. */
  readonly metrics?: Metrics;
  /** The public root URL (`GRAPHIR_BASE_URL`); by default each request's origin (server-identity.ts). */
  readonly baseUrl?: string;
  /** The web origins whose scripts may call the API; by default any. */
  readonly corsOrigins?: CorsOrigins;
  /** Where the built web app is (`GRAPHIR_APP_DIR`); by default dist/app of this package. */
  readonly appDir?: string;
}

/** Paths anyone may call; everything else under these prefixes needs a token. */
const PUBLIC_PATHS = new Set([`${FHIR_BASE}/metadata`.toLowerCase()]);
const PROTECTED_PREFIXES = [FHIR_BASE.toLowerCase(), '/admin'];

/** The Koa application: every route, mounted on what start-up prepared. */
export function createApp({
  limits,
  schema,
  store,
  clients,
  tokens,
  pool,
  audit,
  jobs,
  egress,
  logger = createLogger(),
  metrics = new Metrics(),
  baseUrl,
  corsOrigins = '*',
  appDir,
}: AppDependencies): Koa {
  const app = new Koa();
  // Koa's own logger prints stack traces for every error; errors that reach a client as 500 are
  // reported here once, without request bodies or headers (they may hold secrets or tokens).
  app.silent = true;
  app.on(
    'error',
    (error: Error, ctx?: { method?: string; path?: string; state?: RequestState }) => {
      const fields = {
        err: error,
        requestId: ctx?.state?.requestId,
        method: ctx?.method,
        path: ctx?.path,
      };
      // Answered 503: the database is out of reach, which is no bug of the server's.
      if (error instanceof DatabaseUnavailableError) logger.warn(fields, 'database unavailable');
      else logger.error(fields, 'internal error');
    },
  );
  app.use(requestLogging(logger, metrics));
  // Ahead of the token guard, which would refuse preflights, and of the error middleware, so that
  // error answers carry the CORS headers and are compressed like any other.
  app.use(corsHeaders(corsOrigins));
  app.use(noStore([FHIR_BASE, '/admin']));
  app.use(compression());
  app.use(errorMiddleware());
  app.use(outcomeWhenUnanswered(FHIR_BASE));
  // Before the body parser and the token guard: $graphql's refusals are GraphQL-shaped.
  app.use(graphqlResponses());
  app.use(jsonBodyParser(limits.maxBodyBytes));
  const identityOf = serverIdentity(baseUrl, FHIR_BASE);
  app.use(protect(requireToken(tokens, clients, identityOf)));
  app.use(auditVisibility(audit));
  const searchLimits = limits.search;
  const runner = new BotRunner({
    store,
    schema,
    clients,
    pool,
    audit,
    egress,
    searchLimits,
    queryLimits: limits.query,
    botLimits: limits.bots,
    scheduler: new ProjectScheduler(limits.botsPerProject),
    logger,
    metrics,
  });
  const asyncExecutions = new AsyncExecutions(store, runner, jobs);
  startSubscriptions({
    store,
    runner,
    egress,
    audit,
    clients,
    metrics,
    logger,
    queue: jobs,
    // Without GRAPHIR_BASE_URL a job has no request to take the address from.
    baseUrl: baseUrl ? `${baseUrl.replace(/\/$/, '')}/` : '',
  });
  for (const router of [
    healthRoutes(store.db),
    metricsRoutes(metrics),
    tokenRoutes(clients, tokens, identityOf),
    adminRoutes(clients),
    // The web app's page and files: public, outside the paths the token guard protects.
    appRoutes(appDir),
    // Before graphqlRoutes: a browser's `GET $graphql` gets the playground page.
    playgroundRoutes(),
    // Before the REST routes, whose `/:type` and `/:type/:id` would take `$graphql` and `$execute`.
    graphqlRoutes({ schema, store, searchLimits, queryLimits: limits.query, metrics }),
    botRoutes({
      store,
      runner,
      limits: searchLimits,
      respondAsync: (execution, caller) => asyncExecutions.enqueue(execution, caller),
    }),
    fhirRoutes({ store, limits: searchLimits }),
  ]) {
    app.use(router.routes()).use(router.allowedMethods());
  }
  return app;
}

function protect(guard: Middleware): Middleware {
  return (ctx, next) => {
    // Routes match case-sensitively, and so does this guard; lower case here keeps a path in
    // another case from slipping past it should a router ever match without case.
    const path = ctx.path.toLowerCase();
    const isProtected = PROTECTED_PREFIXES.some(
      (prefix) => path === prefix || path.startsWith(`${prefix}/`),
    );
    // The playground page is static; the GraphQL calls it makes carry a token.
    return isProtected && !PUBLIC_PATHS.has(path) && !isPlaygroundRequest(ctx)
      ? guard(ctx, next)
      : next();
  };
}
