import Koa from 'koa';
import type { GraphQLSchema } from 'graphql';
import { healthRoutes } from './http/health-routes.js';

export interface AppDependencies {
  readonly schema: GraphQLSchema;
}

/** The Koa application: every route, mounted on what start-up prepared. */
export function createApp(dependencies: AppDependencies): Koa {
  const app = new Koa();
  app.context.schema = dependencies.schema;
  const health = healthRoutes();
  app.use(health.routes()).use(health.allowedMethods());
  return app;
}
