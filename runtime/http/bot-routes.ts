/**
 * `POST|GET [base]/Bot/{id}/$execute` and `POST|GET [base]/Bot/$execute?identifier=system|value`.
 * The caller needs read access to Bot and the permission to run bots (authorizeExecute); the
 * identifier is looked up in the caller's project only.
 * The answer's type follows the handler's return value; `Prefer: respond-async` answers 202 with
 * a Task that later holds the result.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { AccessClaims } from '../access/token-service.js';
import { BotRunner, type BotExecution, type BotOutcome } from '../bots/bot-runner.js';
import { HL7_V2_ER7, readBotInput } from '../bots/bot-input.js';
import { botByIdentifier } from '../bots/bot-lookup.js';
import type { SearchLimits } from '../rest/search-request.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { ResourceStore } from '../store/resource-store.js';
import { FHIR_JSON } from './fhir-body.js';
import { FhirError, fhirError, informational } from '../model/fhir-error.js';
import { FHIR_BASE } from '../model/fhir-base.js';
import { accessOf, projectOf, serverRootOf } from './require-token.js';
import { authorizeExecute } from '../access/authorize.js';
import { searchableTypes } from '../../generated/search/index.js';

export interface BotRouteOptions {
  readonly store: ResourceStore;
  readonly runner: BotRunner;
  readonly limits: SearchLimits;
  /** `Prefer: respond-async`: stores a Task and the job that runs the bot (async-execution.ts). */
  readonly respondAsync: (execution: BotExecution, caller: AccessClaims) => Promise<FhirResource>;
}

export function botRoutes({ store, runner, limits, respondAsync }: BotRouteOptions): Router {
  const router = new Router({ prefix: `${FHIR_BASE}/Bot`, sensitive: true });

  /** Runs the current version of `bot`, as the request asks: now, or in the background. */
  const execute = async (ctx: Context, bot: FhirResource) => {
    const input = readBotInput(ctx, ['identifier']);
    const execution = {
      projectId: projectOf(ctx),
      bot,
      input,
      callerId: accessOf(ctx).clientId,
      caller: accessOf(ctx),
      headers: withoutCredentials(ctx.headers),
      baseUrl: `${serverRootOf(ctx)}/`,
    };
    if (/respond-async/.test(ctx.get('Prefer'))) {
      const task = await respondAsync(execution, accessOf(ctx));
      ctx.status = 202;
      ctx.set('Content-Location', `${ctx.protocol}://${ctx.host}${FHIR_BASE}/Task/${task.id}`);
      ctx.type = FHIR_JSON;
      ctx.body = informational(`Bot/${bot.id} is running; its result will be in Task/${task.id}`);
      return;
    }
    respond(ctx, await runner.execute(execution));
  };

  const byIdentifier = async (ctx: Context) => {
    authorizeExecute(accessOf(ctx));
    const identifier = ctx.URL.searchParams.get('identifier');
    if (!identifier)
      throw fhirError(
        400,
        'required',
        'Name the bot: Bot/{id}/$execute or Bot/$execute?identifier=system|value',
        'identifier',
      );
    await execute(ctx, await botByIdentifier(store, projectOf(ctx), identifier, limits));
  };
  const byId = async (ctx: Context) => {
    authorizeExecute(accessOf(ctx));
    await execute(ctx, await store.read(projectOf(ctx), 'Bot', ctx.params.id));
  };
  router.get('/$execute', byIdentifier);
  router.post('/$execute', byIdentifier);
  router.get('/:id/$execute', byId);
  router.post('/:id/$execute', byId);
  return router;
}

/** By the handler's return value: string, Hl7Message, FHIR resource, other JSON, nothing. */
function respond(ctx: Context, outcome: BotOutcome): void {
  ctx.set('X-Trace-Id', outcome.traceId);
  if (outcome.status !== 'ok') throw failure(outcome);
  ctx.status = 200;
  if (outcome.hl7 !== undefined) {
    ctx.type = HL7_V2_ER7;
    ctx.body = outcome.hl7;
  } else if (typeof outcome.value === 'string') {
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = outcome.value;
  } else if (outcome.value === undefined || outcome.value === null) {
    ctx.type = FHIR_JSON;
    ctx.body = informational('The bot ran and returned nothing');
  } else {
    ctx.type = isResource(outcome.value) ? FHIR_JSON : 'application/json';
    ctx.body = JSON.stringify(outcome.value);
  }
}

/** A failed execution as the synchronous call answers it, and as a failed Task holds it. */
export function failure(outcome: BotOutcome): FhirError {
  switch (outcome.status) {
    case 'timeout':
      return fhirError(408, 'timeout', 'The bot ran past its time limit and was stopped');
    case 'memory':
      return fhirError(400, 'too-costly', 'The bot ran past its memory limit and was stopped');
    default: {
      const message = outcome.status === 'error' ? outcome.message : 'The bot failed';
      const stack = outcome.status === 'error' ? outcome.stack : undefined;
      // The message stays the first issue's diagnostics; the stack, when the error has one, is
      // a second, informational issue (docs/bots.md).
      return new FhirError(400, [
        { severity: 'error', code: 'processing', diagnostics: message },
        ...(stack
          ? [
              {
                severity: 'information' as const,
                code: 'informational' as const,
                diagnostics: stack,
              },
            ]
          : []),
      ]);
    }
  }
}

function isResource(value: unknown): boolean {
  const type = (value as { resourceType?: unknown })?.resourceType;
  return typeof type === 'string' && searchableTypes.has(type);
}

/** The request's headers as a bot sees them: its credentials are the caller's, not the bot's. */
function withoutCredentials(
  headers: Context['headers'],
): Record<string, string | string[] | undefined> {
  const { authorization: _authorization, cookie: _cookie, ...rest } = headers;
  return rest;
}
