/**
 * Runs one Bot: its code in the sandbox with the caller's input, the project's secrets and a
 * `fhir` client with the project's access; then an AuditEvent with the outcome, the duration and
 * the tail of the console output. The HTTP layer turns the outcome into a response.
 */
import { randomUUID } from 'node:crypto';
import type { GraphQLSchema } from 'graphql';
import type { ClientRegistry } from '../access/client-registry.js';
import type { QueryLimits } from '../graphql/query-limits.js';
import type { SearchLimits } from '../rest/search-request.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { Hl7Message } from '../hl7/hl7-message.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { EgressClient } from '../egress/egress-client.js';
import type { AuditLog } from './audit-log.js';
import { BotFetch, bodyLimit } from './bot-fetch.js';
import type { ProjectScheduler } from './project-scheduler.js';
import { createBotHost } from './bot-host.js';
import { HL7_V2_ER7, type BotInput } from './bot-input.js';
import type { Prelude, SandboxHost, SandboxPool, SandboxResult } from './sandbox-pool.js';
import { WEB_PLATFORM } from './web-platform.js';

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
  /** The request's headers, without its credentials (`event.headers`). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The server's public root URL with a trailing slash, as Medplum's `event.baseUrl`. */
  readonly baseUrl: string;
}

export type BotOutcome = SandboxResult & { readonly traceId: string };

/** Console output kept in the AuditEvent: its last characters. */
const CONSOLE_TAIL = 4000;
/**
 * The class as an expression. tsx (npm run dev) compiles classes with calls to an `__name`
 * helper: the isolate gets one of its own, in the class's scope only.
 */
const HL7_CLASS = `((__name) => (${Hl7Message.toString()}))((target) => target)`;
/**
 * `Hl7Message` in the isolate. Compiling the class takes longer than the rest of an echo
 * execution, so it is compiled ahead (a script) only in isolates for bots that will use it;
 * elsewhere on first read (a lazy global). Like a built-in class, it is not enumerable.
 */
const HL7_EAGER = `Object.defineProperty(globalThis, 'Hl7Message', { configurable: true, writable: true, value: ${HL7_CLASS} });`;
const HL7_LAZY: Prelude = {
  globals: ['Hl7Message'],
  source: `() => ({ Hl7Message: ${HL7_CLASS} })`,
};
/**
 * Parses the input text into an Hl7Message inside the sandbox before the handler sees it. Only
 * for an HL7 body: a JSON object or a form with an `__hl7` key is the client's data, not HL7.
 */
const HL7_EVENT = `globalThis.__graphirReviveEvent = (event) => (event.contentType === '${HL7_V2_ER7}' ? { ...event, input: Hl7Message.parse(event.input.__hl7) } : event);`;

/**
 * Two arrays, always the same: sandbox workers prepare isolates ahead for each. HL7 input always
 * runs with HL7_PRELUDES, so only they parse it.
 */
const PRELUDES: readonly Prelude[] = [HL7_LAZY, ...WEB_PLATFORM];
const HL7_PRELUDES: readonly Prelude[] = [HL7_EAGER, HL7_EVENT, ...WEB_PLATFORM];

export class BotRunner {
  constructor(private readonly options: BotRunnerOptions) {}

  /** Waits for a place in the project's share of the pool; 429 when its queue is full. */
  execute(execution: BotExecution): Promise<BotOutcome> {
    return this.options.scheduler.run(execution.projectId, () => this.run(execution));
  }

  private async run({
    projectId,
    bot,
    input,
    callerId,
    headers,
    baseUrl,
  }: BotExecution): Promise<BotOutcome> {
    const { store, schema, clients, pool, searchLimits, queryLimits, botLimits } = this.options;
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
    const fetcher = new BotFetch(this.options.egress, bodyLimit(botLimits.memoryBytes));
    const host = afterQueuedAudits(
      createBotHost({ store, schema, limits: searchLimits, queryLimits, projectId }),
      () => this.options.audit.settledFor(projectId),
    );
    let result: SandboxResult;
    try {
      result = await pool.run({
        code,
        event,
        preludes: input.kind === 'hl7' || code.includes('Hl7Message') ? HL7_PRELUDES : PRELUDES,
        timeoutMs: timeoutOf(bot, botLimits) * 1000,
        memoryBytes: botLimits.memoryBytes,
        host: fetcher.host(host),
      });
    } finally {
      fetcher.end();
    }
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
function storable(text: string): string {
  return text.replace(/\u0000|\p{Cs}/gu, '\uFFFD') || ' ';
}
