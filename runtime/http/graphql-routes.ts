/**
 * FHIR GraphQL over HTTP: `POST|GET [base]/$graphql`, instance level
 * `[base]/{type}/{id}/$graphql` (the resource is the query's root), and the generated SDL at
 * `[base]/$graphql/schema.graphql`. Each request runs through the pipeline of graphql-pipeline.ts.
 * @see http://hl7.org/fhir/R4/graphql.html
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Router from '@koa/router';
import { GraphQLObjectType, GraphQLSchema } from 'graphql';
import type { Context } from 'koa';
import { searchableTypes } from '../../generated/search/index.js';
import { authorize } from '../access/authorize.js';
import { fhirError } from '../model/fhir-error.js';
import { generatedPath } from '../model/generated-json.js';
import { runGraphQL, type GraphQLPipelineOptions } from './graphql-pipeline.js';
import { sendKeptBody } from './kept-body.js';
import { accessOf, projectOf } from './require-token.js';
import { FHIR_BASE } from '../model/fhir-base.js';

export interface GraphQLRouteOptions extends GraphQLPipelineOptions {
  readonly schema: GraphQLSchema;
}

export function graphqlRoutes({ schema, ...pipeline }: GraphQLRouteOptions): Router {
  const router = new Router({ prefix: FHIR_BASE, sensitive: true });
  const instanceSchemas = new Map<string, GraphQLSchema>();
  const instanceSchema = (type: string) => {
    let built = instanceSchemas.get(type);
    if (!built) {
      const root = schema.getType(type) as GraphQLObjectType;
      built = new GraphQLSchema({
        query: root,
        types: Object.values(schema.getTypeMap()),
        directives: schema.getDirectives(),
      });
      instanceSchemas.set(type, built);
    }
    return built;
  };
  const run = (ctx: Context, target: GraphQLSchema, rootValue: unknown) =>
    runGraphQL(ctx, target, rootValue, pipeline);

  router.get('/$graphql/schema.graphql', (ctx) => {
    ctx.type = 'text/plain; charset=utf-8';
    // The same for every project, and no one's data: kept, and checked again by its ETag.
    ctx.set('Cache-Control', 'no-cache');
    return sendKeptBody(ctx, generatedSdl());
  });
  router.get('/$graphql', (ctx) => run(ctx, schema, {}));
  router.post('/$graphql', (ctx) => run(ctx, schema, {}));
  const instance = async (ctx: Context) => {
    const type = ctx.params.type;
    if (!searchableTypes.has(type))
      throw fhirError(404, 'not-found', `${type} is not a resource type this server knows`);
    authorize(accessOf(ctx), type, 'r');
    const resource = await pipeline.store.read(projectOf(ctx), type, ctx.params.id);
    await run(ctx, instanceSchema(type), resource);
  };
  router.get('/:type/:id/$graphql', instance);
  router.post('/:type/:id/$graphql', instance);
  return router;
}

let sdl: Buffer | undefined;
/** The generated SDL files together: the whole schema, read on first request. */
function generatedSdl(): Buffer {
  if (!sdl) {
    const folder = generatedPath('graphql');
    sdl = Buffer.from(
      readdirSync(folder)
        .filter((f) => f.endsWith('.graphql'))
        .sort()
        .map((f) => readFileSync(join(folder, f), 'utf8'))
        .join('\n'),
    );
  }
  return sdl;
}
