/**
 * The admin API: projects (root only), their clients and bot secrets (root, or an admin client
 * of that project). Another project looks exactly like one that does not exist: 404.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { FULL_ACCESS, type ClientRegistry } from '../access/client-registry.js';
import { ScopeError, Scopes } from '../access/scopes.js';
import { searchableTypes } from '../../generated/search/index.js';
import { fhirError } from '../model/fhir-error.js';
import { accessOf } from './require-token.js';
import { grantOf } from '../access/authorize.js';

const SECRET_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

export function adminRoutes(clients: ClientRegistry): Router {
  const router = new Router({ prefix: '/admin', sensitive: true });

  router.post('/projects', async (ctx) => {
    requireRoot(ctx);
    const { name } = jsonBody(ctx);
    ctx.status = 201;
    ctx.body = await clients.createProject(requiredText(name, 'name'));
  });

  router.post('/projects/:projectId/clients', async (ctx) => {
    const projectId = await administeredProject(ctx, clients);
    const { name, scope } = jsonBody(ctx);
    const text = scope === undefined ? FULL_ACCESS : requiredText(scope, 'scope');
    let scopes: Scopes;
    try {
      scopes = Scopes.parse(text);
    } catch (error) {
      throw fhirError(400, 'invalid', `scope: ${(error as ScopeError).message}`, 'scope');
    }
    const unknown = scopes.types().filter((type) => !searchableTypes.has(type));
    if (unknown.length > 0)
      throw fhirError(
        400,
        'invalid',
        `scope: ${unknown.join(', ')} is not a resource type`,
        'scope',
      );
    const access = accessOf(ctx);
    if (access.projectId && !grantOf(access).covers(scopes)) {
      throw fhirError(
        403,
        'forbidden',
        `A client may not be granted more than the token creating it has (${grantOf(access)})`,
        'scope',
      );
    }
    ctx.status = 201;
    ctx.body = await clients.createClient(projectId, requiredText(name, 'name'), text);
  });

  router.delete('/projects/:projectId/clients/:clientId', async (ctx) => {
    const projectId = await administeredProject(ctx, clients);
    if (!(await clients.deleteClient(projectId, ctx.params.clientId))) {
      throw fhirError(
        404,
        'not-found',
        `Client ${ctx.params.clientId} is not known in this project`,
      );
    }
    ctx.status = 204;
  });

  router.put('/projects/:projectId/secrets/:name', async (ctx) => {
    const projectId = await administeredProject(ctx, clients);
    const name = ctx.params.name;
    if (!SECRET_NAME.test(name))
      throw fhirError(400, 'invalid', 'A secret name is 1–100 of A–Z a–z 0–9 _ . -');
    const { value } = jsonBody(ctx);
    if (
      typeof value !== 'string' &&
      typeof value !== 'boolean' &&
      !(typeof value === 'number' && Number.isFinite(value))
    )
      throw fhirError(400, 'invalid', 'value must be a string, a boolean or a number', 'value');
    const outcome = await clients.setSecret(projectId, name, value);
    ctx.status = outcome === 'created' ? 201 : 200;
    ctx.body = { name };
  });

  return router;
}

function requireRoot(ctx: Context): void {
  const access = accessOf(ctx);
  if (access.projectId || !access.admin)
    throw fhirError(403, 'forbidden', 'Only the root client creates projects');
}

/** The project in the URL, when the caller may administer it. */
async function administeredProject(ctx: Context, clients: ClientRegistry): Promise<string> {
  const access = accessOf(ctx);
  const projectId = ctx.params.projectId;
  const isRoot = !access.projectId && access.admin;
  if (!isRoot && access.projectId !== projectId)
    throw fhirError(404, 'not-found', `Project ${projectId} is not known`);
  if (!isRoot && !access.admin)
    throw fhirError(403, 'forbidden', 'Only an admin client of this project may do this');
  if (!(await clients.projectExists(projectId)))
    throw fhirError(404, 'not-found', `Project ${projectId} is not known`);
  return projectId;
}

function jsonBody(ctx: Context): Record<string, unknown> {
  if (!ctx.is('application/json'))
    throw fhirError(415, 'not-supported', 'The body must be application/json');
  const body = (ctx.request as { body?: unknown }).body;
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw fhirError(400, 'structure', 'The body must be a JSON object');
  return body as Record<string, unknown>;
}

function requiredText(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 1000) {
    throw fhirError(400, 'required', `${name} must be a non-empty string`, name);
  }
  return value;
}
