import Koa from 'koa';
import type { GraphQLSchema } from 'graphql';
import { errorMiddleware } from './http/error-middleware.js';
import { jsonBodyParser } from './http/fhir-body.js';
import { fhirRoutes } from './http/fhir-routes.js';
import { healthRoutes } from './http/health-routes.js';
import type { ResourceStore } from './store/resource-store.js';
import type { Config } from './config.js';

export interface AppDependencies {
  readonly config: Config;
  readonly schema: GraphQLSchema;
  readonly store: ResourceStore;
}

/** Until access control lands (issue 4), every request works in this one project. */
export const DEFAULT_PROJECT_ID = 'default';

/** The Koa application: every route, mounted on what start-up prepared. */
export function createApp({ config, schema, store }: AppDependencies): Koa {
  const app = new Koa();
  app.context.schema = schema;
  app.silent = true;
  const health = healthRoutes();
  const fhir = fhirRoutes({
    store,
    limits: { defaultCount: config.defaultPageSize, maxCount: config.maxPageSize },
    projectOf: () => DEFAULT_PROJECT_ID,
  });
  app.use(errorMiddleware());
  app.use(jsonBodyParser(config.maxBodyBytes));
  app.use(health.routes()).use(health.allowedMethods());
  app.use(fhir.routes()).use(fhir.allowedMethods());
  return app;
}
