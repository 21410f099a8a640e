/**
 * FHIR REST under `/fhir/R4`: create, read, update, patch, delete (conditional create, update
 * and delete too), version read, history, search, transaction and batch Bundles, and the
 * CapabilityStatement.
 * @see http://hl7.org/fhir/R4/http.html
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { searchableTypes } from '../../generated/search/index.js';
import { processBundle } from '../rest/bundle-processor.js';
import { capabilityStatementJson } from '../rest/capability-statement.js';
import { conditionalCreate } from '../rest/conditional-create.js';
import { clientCopyIsCurrent, versionOf } from '../rest/conditional-read.js';
import { CONDITIONAL_DELETE, conditionalDelete } from '../rest/conditional-delete.js';
import { CONDITIONAL_UPDATE, conditionalUpdate } from '../rest/conditional-update.js';
import { historyBundle, readVersion } from '../rest/history-bundle.js';
import { parseJsonPatch } from '../rest/json-patch.js';
import { patchResource } from '../rest/patch-resource.js';
import { parseCondition } from '../rest/search-condition.js';
import { searchBundle } from '../rest/search-bundle.js';
import { parseSearchRequest, type SearchLimits } from '../rest/search-request.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { WriteResult } from '../store/write-operation.js';
import { searchResources } from '../store/search-store.js';
import type { Interaction } from '../access/scopes.js';
import { FHIR_JSON, jsonPatchBody, resourceBody } from './fhir-body.js';
import { accessOf, projectOf } from './require-token.js';
import { authorize } from '../access/authorize.js';
import { writeAuthor } from '../access/write-author.js';
import { fhirError, informational } from '../model/fhir-error.js';

import { resourceBodyFor } from '../rest/resource-body.js';
import { FHIR_BASE } from '../model/fhir-base.js';

export interface FhirRouteOptions {
  readonly store: ResourceStore;
  readonly limits: SearchLimits;
}

/** Everything under the base but `metadata` sits behind requireToken (app.ts). */
export function fhirRoutes({ store, limits }: FhirRouteOptions): Router {
  const router = new Router({ prefix: FHIR_BASE, sensitive: true });
  const base = (ctx: Context) => `${ctx.protocol}://${ctx.host}${FHIR_BASE}`;

  router.get('/metadata', (ctx) => send(ctx, 200, capabilityStatementJson(base(ctx))));

  router.post('/', async (ctx) => {
    const access = accessOf(ctx);
    const context = {
      store,
      projectId: projectOf(ctx),
      base: base(ctx),
      limits,
      authorize: (type: string, interaction: Interaction) => authorize(access, type, interaction),
      mayRead: (type: string) => access.scopes.allows(type, 'r'),
      author: writeAuthor(access),
    };
    send(ctx, 200, await processBundle(resourceBody(ctx), context));
  });

  router.get('/:type', async (ctx) => searchType(ctx, ctx.URL.searchParams));
  router.post('/:type/_search', async (ctx) => {
    if (!ctx.is('application/x-www-form-urlencoded'))
      throw fhirError(415, 'not-supported', 'POST _search takes application/x-www-form-urlencoded');
    const form = new URLSearchParams(ctx.request.rawBody ?? '');
    for (const [name, value] of ctx.URL.searchParams) form.append(name, value);
    await searchType(ctx, form);
  });

  router.post('/:type', async (ctx) => {
    const resourceType = allowed(ctx, ctx.params.type, 'c');
    const resource = bodyOf(ctx, resourceType);
    const ifNoneExist = ctx.get('If-None-Exist');
    if (ifNoneExist) authorize(accessOf(ctx), resourceType, 's');
    const projectId = projectOf(ctx);
    const author = writeAuthor(accessOf(ctx));
    const result = ifNoneExist
      ? await conditionalCreate(
          store,
          projectId,
          resource,
          parseCondition(resourceType, ifNoneExist, limits, 'If-None-Exist'),
          undefined,
          undefined,
          author,
        )
      : (await store.write(projectId, [{ kind: 'create', resource, author }]))[0];
    sendWritten(ctx, base(ctx), result);
  });

  router.put('/:type', async (ctx) => {
    const resourceType = allowed(ctx, ctx.params.type, 'u');
    authorize(accessOf(ctx), resourceType, 's');
    const condition = parseCondition(resourceType, ctx.querystring, limits, CONDITIONAL_UPDATE);
    const resource = bodyOf(ctx, resourceType);
    const ifMatch = ctx.get('If-Match') || undefined;
    const result = await conditionalUpdate(
      store,
      projectOf(ctx),
      resource,
      condition,
      ifMatch,
      writeAuthor(accessOf(ctx)),
    );
    sendWritten(ctx, base(ctx), result);
  });

  router.delete('/:type', async (ctx) => {
    const resourceType = allowed(ctx, ctx.params.type, 'd');
    authorize(accessOf(ctx), resourceType, 's');
    const condition = parseCondition(resourceType, ctx.querystring, limits, CONDITIONAL_DELETE);
    const deleted = await conditionalDelete(store, projectOf(ctx), condition);
    send(
      ctx,
      200,
      informational(
        deleted
          ? `Deleted ${resourceType}/${deleted.id}`
          : `No ${resourceType} matched ${condition.text}: nothing was deleted`,
      ),
    );
  });

  router.get('/:type/:id', async (ctx) => {
    const resource = await store.read(
      projectOf(ctx),
      allowed(ctx, ctx.params.type, 'r'),
      ctx.params.id,
    );
    sendResource(ctx, resource);
  });

  router.put('/:type/:id', async (ctx) => {
    const resourceType = allowed(ctx, ctx.params.type, 'u');
    const resource = bodyOf(ctx, resourceType);
    const ifMatch = ctx.get('If-Match') || undefined;
    const [result] = await store.write(projectOf(ctx), [
      {
        kind: 'update',
        resourceType,
        id: ctx.params.id,
        resource,
        ifMatch,
        author: writeAuthor(accessOf(ctx)),
      },
    ]);
    sendWritten(ctx, base(ctx), result);
  });

  router.patch('/:type/:id', async (ctx) => {
    const resourceType = allowed(ctx, ctx.params.type, 'u');
    const patch = parseJsonPatch(jsonPatchBody(ctx));
    const result = await patchResource(store, projectOf(ctx), {
      resourceType,
      id: ctx.params.id,
      patch,
      ifMatch: ctx.get('If-Match') || undefined,
      author: writeAuthor(accessOf(ctx)),
    });
    sendWritten(ctx, base(ctx), result);
  });

  router.delete('/:type/:id', async (ctx) => {
    const resourceType = allowed(ctx, ctx.params.type, 'd');
    const ifMatch = ctx.get('If-Match') || undefined;
    await store.write(projectOf(ctx), [
      { kind: 'delete', resourceType, id: ctx.params.id, ifMatch },
    ]);
    send(ctx, 200, informational(`Deleted ${resourceType}/${ctx.params.id}`));
  });

  router.get('/:type/:id/_history', async (ctx) => {
    const resourceType = allowed(ctx, ctx.params.type, 'r');
    send(
      ctx,
      200,
      await historyBundle(store, projectOf(ctx), base(ctx), resourceType, ctx.params.id),
    );
  });

  router.get('/:type/:id/_history/:vid', async (ctx) => {
    const resourceType = allowed(ctx, ctx.params.type, 'r');
    const { id, vid } = ctx.params;
    sendResource(ctx, await readVersion(store, projectOf(ctx), resourceType, id, vid));
  });

  async function searchType(ctx: Context, query: URLSearchParams): Promise<void> {
    const resourceType = allowed(ctx, ctx.params.type, 's');
    const request = parseSearchRequest(resourceType, query, limits);
    const access = accessOf(ctx);
    const found = await searchResources(
      store.searchSource(),
      projectOf(ctx),
      resourceType,
      request,
    );
    // Included resources of types the token may not read are left out, never shown.
    const result = {
      ...found,
      included: found.included.filter((r) => access.scopes.allows(r.resourceType, 'r')),
    };
    send(
      ctx,
      200,
      searchBundle(base(ctx), result, {
        url: ctx.URL,
        count: request.count,
        offset: request.offset,
        elements: request.elements,
      }),
    );
  }

  return router;
}

/** A known resource type whose `interaction` the token allows: else 404, or 403. */
function allowed(ctx: Context, type: string, interaction: Interaction): string {
  if (!searchableTypes.has(type)) {
    throw fhirError(404, 'not-found', `${type} is not a resource type this server knows`);
  }
  authorize(accessOf(ctx), type, interaction);
  return type;
}

function bodyOf(ctx: Context, resourceType: string): FhirResource {
  return resourceBodyFor(resourceType, resourceBody(ctx));
}

function send(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = FHIR_JSON;
  ctx.body = body;
}

/** A read's answer: the resource, or 304 when the request's conditions say the client has it. */
function sendResource(ctx: Context, resource: FhirResource): void {
  const { versionId, lastUpdated } = versionOf(resource);
  if (versionId) ctx.set('ETag', `W/"${versionId}"`);
  if (lastUpdated) ctx.set('Last-Modified', new Date(lastUpdated).toUTCString());
  const conditions = {
    ifNoneMatch: ctx.get('If-None-Match'),
    ifModifiedSince: ctx.get('If-Modified-Since'),
  };
  // GET routes answer HEAD too.
  if (clientCopyIsCurrent(conditions, resource)) ctx.status = 304;
  else send(ctx, 200, resource);
}

/** Location and ETag always; the body as `Prefer: return=` asks (representation by default). */
function sendWritten(ctx: Context, base: string, result: WriteResult): void {
  ctx.set('Location', `${base}/${result.resourceType}/${result.id}/_history/${result.versionId}`);
  ctx.set('ETag', `W/"${result.versionId}"`);
  ctx.set('Last-Modified', new Date(result.lastUpdated).toUTCString());
  const prefer =
    /return=(minimal|representation|OperationOutcome)/.exec(ctx.get('Prefer'))?.[1] ??
    'representation';
  if (prefer === 'minimal') {
    ctx.body = '';
    ctx.status = result.status;
  } else if (prefer === 'OperationOutcome') {
    send(
      ctx,
      result.status,
      informational(
        `${result.status === 201 ? 'Created' : 'Updated'} ${result.resourceType}/${result.id}`,
      ),
    );
  } else {
    send(ctx, result.status, result.resource);
  }
}
