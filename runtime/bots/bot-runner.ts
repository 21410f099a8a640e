/**
 * Runs one Bot: its code in the sandbox with the caller's input, the project's secrets and a
 * `fhir` client with the bot's own access (runtime/access/bot-access.ts); then an AuditEvent
 * with the outcome, the duration and the tail of the console output. The HTTP layer turns the
 * outcome into a response.
 */
import { randomUUID } from 'node:crypto';
import type { GraphQLSchema } from 'graphql';
import { botAccess } from '../access/bot-access.js';
import type { ClientRegistry } from '../access/client-registry.js';
import type { AccessClaims } from '../access/token-service.js';
import type { QueryLimits } from '../graphql/query-limits.js';
import type { SearchLimits } from '../rest/search-request.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { EgressClient } from '../egress/egress-client.js';
import type { AuditLog } from './audit-log.js';
import { BotFetch, bodyLimit } from './bot-fetch.js';
import type { ProjectScheduler } from './project-scheduler.js';
import { createBotHost } from './bot-host.js';
import type { BotInput } from './bot-input.js';
import { preludesFor } from './bot-preludes.js';
import { mapBotStack } from './source-map-stack.js';
import type { SandboxHost, SandboxPool, SandboxResult } from './sandbox-pool.js';

export interface BotLimits {
  readonly defaultTimeoutSeconds: number;
  readonly maxTimeoutSeconds: number;
  readonly memoryBytes: number;
}

export interface BotRunnerOptions {
  readonly store: ResourceStore;
  readonly schema: GraphQLSchema;
  readonly clients: ClientRegistry;
  readonly pool: SandboxPool;
  readonly audit: AuditLog;
  readonly searchLimits: SearchLimits;
  readonly queryLimits: QueryLimits;
  readonly botLimits: BotLimits;
  /** Where a bot's `fetch` may connect (GRAPHIR_EGRESS_ALLOW). */
  readonly egress: EgressClient;
  /** Places in the pool, fairly across projects. */
  readonly scheduler: ProjectScheduler;
  /** The bot's console output at debug level, tagged with the execution's trace id. */
  readonly logger?: Logger;
  /** Executions by status and their duration. */
  readonly metrics?: Metrics;
}

export interface BotExecution {
  readonly projectId: string;
  /** Its current version, read for this execution. */
  readonly bot: FhirResource;
  readonly input: BotInput;
  /** The client that asked, for the AuditEvent and `event.requester`. */
  readonly callerId: string;
  /**
   * What the caller may do: the client's token, or the access of the bot that ran this one
   * (`fhir.executeBot`). It bounds the bot's own access when the bot runs as its caller
   * (`Bot.runAsUser`, runtime/access/bot-access.ts).
   */
  readonly caller: AccessClaims;
  /** The request's headers, without its credentials (`event.headers`). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The server's public root URL with a trailing slash, as Medplum's `event.baseUrl`. */
  readonly baseUrl: string;
}

/** Where a run started by another bot (`fhir.executeBot`) stands in its chain. */
interface Nesting {
  /** 0 for a run a client asked for, one more for each bot in between. */
  readonly depth: number;
  /** When the run that started the chain must end (ms since the epoch). */
  readonly deadline: number;
}

/** Bots in one chain of bots calling bots, the first one included. */
export const MAX_BOT_DEPTH = 5;

export type BotOutcome = SandboxResult & { readonly traceId: string };

/** Console output kept in the AuditEvent: its last characters. */
const CONSOLE_TAIL = 4000;
export class BotRunner {
  constructor(private readonly options: BotRunnerOptions) {}

  /** Waits for a place in the project's share of the pool; 429 when its queue is full. */
  execute(execution: BotExecution): Promise<BotOutcome> {
    return this.options.scheduler.run(execution.projectId, () => this.run(execution));
  }

  private async run(execution: BotExecution, nesting?: Nesting): Promise<BotOutcome> {
    const { projectId, bot, input, callerId, caller, headers, baseUrl } = execution;
    const { store, schema, clients, pool, searchLimits, queryLimits, botLimits } = this.options;
    const access = botAccess(bot, caller);
    const traceId = randomUUID();
    const event = {
      bot: { reference: `Bot/${bot.id}` },
      input: input.kind === 'hl7' ? { __hl7: input.value } : input.value,
      contentType: input.contentType,
      secrets: await clients.secrets(projectId),
      traceId,
      // Medplum names the caller by its ClientApplication; Graphir's clients are not resources.
      requester: { reference: `ClientApplication/${callerId}` },
      headers,
      baseUrl,
    };
    const started = new Date();
    const code = String(bot.code ?? '');
    const depth = nesting?.depth ?? 0;
    // A bot started by another ends when that one must: its time is bounded by what is left.
    const timeoutMs = Math.min(
      timeoutOf(bot, botLimits) * 1000,
      nesting ? nesting.deadline - Date.now() : Infinity,
    );
    const deadline = nesting?.deadline ?? Date.now() + timeoutMs;
    const runBot = (child: FhirResource, childInput: BotInput) => {
      if (depth + 1 >= MAX_BOT_DEPTH)
        throw fhirError(
          400,
          'too-costly',
          `Bots may call bots at most ${MAX_BOT_DEPTH - 1} deep: Bot/${bot.id} is at the limit`,
        );
      // The child runs with its own access; this bot is its caller (for runAsUser).
      const childExecution = { ...execution, bot: child, input: childInput, caller: access };
      return this.run(childExecution, { depth: depth + 1, deadline });
    };
    const fetcher = new BotFetch(this.options.egress, bodyLimit(botLimits.memoryBytes));
    const host = afterQueuedAudits(
      createBotHost({
        store,
        schema,
        limits: searchLimits,
        queryLimits,
        projectId,
        access,
        baseUrl,
        runBot,
      }),
      () => this.options.audit.settledFor(projectId),
    );
    let ran: SandboxResult;
    try {
      ran =
        timeoutMs > 0
          ? await pool.run({
              code,
              event,
              preludes: preludesFor(input.kind === 'hl7', code),
              timeoutMs,
              memoryBytes: botLimits.memoryBytes,
              host: fetcher.host(host),
              depth,
            })
          : { status: 'timeout', console: '', durationMs: 0 };
    } finally {
      fetcher.end();
    }
    const result = atBotSources(ran, bot);
    this.options.audit.record(
      projectId,
      auditEvent(bot, callerId, traceId, started, result, fetcher.log()),
    );
    this.options.metrics?.observeBot(result.status, result.durationMs);
    if (result.console) {
      this.options.logger?.debug(
        {
          traceId,
          projectId,
          bot: `Bot/${bot.id}`,
          status: result.status,
          console: result.console,
        },
        'bot console',
      );
    }
    return { ...result, traceId };
  }
}

/**
 * The error's stack and the console with positions in the bot's own files, through the Bot's
 * source map when its code is a bundle (source-map-stack.ts).
 */
function atBotSources(result: SandboxResult, bot: FhirResource): SandboxResult {
  const sourceMap = typeof bot.sourceMap === 'string' ? bot.sourceMap : undefined;
  const version = (bot.meta as { versionId?: unknown } | undefined)?.versionId;
  const key = typeof version === 'string' ? `${bot.id}/${version}` : undefined;
  const console = mapBotStack(result.console, sourceMap, key);
  if (result.status === 'error' && result.stack !== undefined) {
    return { ...result, console, stack: mapBotStack(result.stack, sourceMap, key) };
  }
  return console === result.console ? result : { ...result, console };
}

/**
 * Host calls that may read AuditEvents (a type, search or GraphQL text naming them) first wait
 * for the project's queued ones, as HTTP requests do (http/audit-visibility.ts): a bot finds the
 * AuditEvents of executions before it.
 */
function afterQueuedAudits(host: SandboxHost, settled: () => Promise<void>): SandboxHost {
  return async (method, args) => {
    if (args.some((arg) => typeof arg === 'string' && arg.includes('AuditEvent'))) await settled();
    return host(method, args);
  };
}

function timeoutOf(bot: FhirResource, limits: BotLimits): number {
  const requested = typeof bot.timeout === 'number' ? bot.timeout : limits.defaultTimeoutSeconds;
  return Math.min(requested, limits.maxTimeoutSeconds);
}

/** @see http://hl7.org/fhir/R4/auditevent.html */
function auditEvent(
  bot: FhirResource,
  callerId: string,
  traceId: string,
  started: Date,
  result: SandboxResult,
  fetches: readonly string[],
): FhirResource {
  const ended = new Date();
  const outcome = { ok: '0', error: '4', timeout: '8', memory: '8' }[result.status];
  const detail = (type: string, valueString: string) => ({ type, valueString });
  return {
    resourceType: 'AuditEvent',
    type: {
      system: 'http://terminology.hl7.org/CodeSystem/audit-event-type',
      code: 'rest',
      display: 'RESTful Operation',
    },
    subtype: [
      {
        system: 'http://hl7.org/fhir/restful-interaction',
        code: 'operation',
        display: 'operation',
      },
    ],
    action: 'E',
    period: { start: started.toISOString(), end: ended.toISOString() },
    recorded: ended.toISOString(),
    outcome,
    outcomeDesc: result.status === 'error' ? storable(result.message) : result.status,
    agent: [
      {
        type: { text: 'client' },
        who: { identifier: { system: 'urn:graphir:client', value: callerId } },
        requestor: true,
      },
    ],
    source: { observer: { display: 'Graphir bot runtime' } },
    entity: [
      {
        what: { reference: `Bot/${bot.id}` },
        detail: [
          detail('status', result.status),
          detail('duration-ms', String(Math.round(result.durationMs))),
          detail('trace-id', traceId),
          ...(result.status === 'error' && result.stack
            ? [detail('stack', storable(result.stack))]
            : []),
          ...(result.console
            ? [detail('console', storable(result.console.slice(-CONSOLE_TAIL)))]
            : []),
          // Each request of the bot's fetch: method, host, status or failure, duration.
          ...fetches.map((line) => detail('fetch', storable(line))),
        ],
      },
    ],
  };
}

/**
 * Text from a bot as a FHIR string can hold it: U+0000 and unpaired surrogates (an error message
 * with them, a console tail cut inside a pair) become U+FFFD, and nothing becomes a space —
 * else the AuditEvent, and every other one written with it, is refused.
 */
export function storable(text: string): string {
  return text.replace(/\u0000|\p{Cs}/gu, '\uFFFD') || ' ';
}
