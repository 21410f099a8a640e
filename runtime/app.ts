import Koa, { type Middleware } from 'koa';
import type { GraphQLSchema } from 'graphql';
import type { ClientRegistry } from './access/client-registry.js';
import type { TokenService } from './access/token-service.js';
import type { Config } from './config.js';
import { adminRoutes } from './http/admin-routes.js';
import { errorMiddleware } from './http/error-middleware.js';
import { jsonBodyParser } from './http/fhir-body.js';
import { FHIR_BASE, fhirRoutes } from './http/fhir-routes.js';
import { healthRoutes } from './http/health-routes.js';
import { requireToken } from './http/require-token.js';
import { tokenRoutes } from './http/token-routes.js';
import type { ResourceStore } from './store/resource-store.js';

export interface AppDependencies {
  readonly config: Config;
  readonly schema: GraphQLSchema;
  readonly store: ResourceStore;
  readonly clients: ClientRegistry;
  readonly tokens: TokenService;
}

/** Paths anyone may call; everything else under these prefixes needs a token. */
const PUBLIC_PATHS = new Set([`${FHIR_BASE}/metadata`]);
const PROTECTED_PREFIXES = [FHIR_BASE, '/admin'];

/** The Koa application: every route, mounted on what start-up prepared. */
export function createApp({ config, schema, store, clients, tokens }: AppDependencies): Koa {
  const app = new Koa();
  app.context.schema = schema;
  app.silent = true;
  app.use(errorMiddleware());
  app.use(jsonBodyParser(config.maxBodyBytes));
  app.use(protect(requireToken(tokens, clients)));
  for (const router of [
    healthRoutes(),
    tokenRoutes(clients, tokens),
    adminRoutes(clients),
    fhirRoutes({
      store,
      limits: { defaultCount: config.defaultPageSize, maxCount: config.maxPageSize },
    }),
  ]) {
    app.use(router.routes()).use(router.allowedMethods());
  }
  return app;
}

function protect(guard: Middleware): Middleware {
  return (ctx, next) => {
    const isProtected = PROTECTED_PREFIXES.some(
      (prefix) => ctx.path === prefix || ctx.path.startsWith(`${prefix}/`),
    );
    return isProtected && !PUBLIC_PATHS.has(ctx.path) ? guard(ctx, next) : next();
  };
}
