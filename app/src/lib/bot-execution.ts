/**
 * Running a bot from the page (`Bot/{id}/$execute` or `Bot/$execute?identifier=…`, docs/bots.md),
 * its answer read by type, and executions read back from the AuditEvents the server writes for
 * each one (outcome, duration, caller, trace id, the tail of the console).
 */
import type { FhirClient } from './fhir-client.js';
import type { Bundle, Resource } from './fhir-types.js';
import type { OperationOutcome } from './outcome.js';

export const BOT_CONTENT_TYPES = [
  'text/plain',
  'application/json',
  'application/x-www-form-urlencoded',
  'application/fhir+json',
  'x-application/hl7-v2+er7',
] as const;
export type BotContentType = (typeof BOT_CONTENT_TYPES)[number];
const HL7 = 'x-application/hl7-v2+er7';

export type BotTarget =
  | { readonly kind: 'id'; readonly id: string }
  /** `system|value` */
  | { readonly kind: 'identifier'; readonly identifier: string };

export interface ExecutionRequest {
  readonly target: BotTarget;
  readonly method: 'POST' | 'GET';
  readonly contentType: BotContentType;
  readonly input: string;
  /** GET's parameters, as a query string (`name=Ada&x=1`). */
  readonly parameters: string;
}

export type BotAnswer =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'resource'; readonly resource: Resource }
  | { readonly kind: 'outcome'; readonly outcome: OperationOutcome }
  | { readonly kind: 'hl7'; readonly segments: readonly (readonly string[])[] };

export interface ExecutionResult {
  readonly status: number;
  readonly contentType: string;
  readonly traceId: string | undefined;
  readonly answer: BotAnswer;
}

export async function executeBot(
  client: FhirClient,
  request: ExecutionRequest,
): Promise<ExecutionResult> {
  const query = new URLSearchParams(request.method === 'GET' ? request.parameters : '');
  const path =
    request.target.kind === 'id'
      ? `Bot/${encodeURIComponent(request.target.id)}/$execute`
      : (query.set('identifier', request.target.identifier), 'Bot/$execute');
  const search = query.toString();
  const response = await client.send(search ? `${path}?${search}` : path, {
    method: request.method,
    ...(request.method === 'POST'
      ? {
          // HL7 v2 segments end with a carriage return; the editor's lines end with \n.
          body: request.contentType === HL7 ? request.input.replace(/\r?\n/g, '\r') : request.input,
          contentType: request.contentType,
        }
      : {}),
  });
  const contentType = response.headers.get('Content-Type') ?? '';
  return {
    status: response.status,
    contentType,
    traceId: response.headers.get('X-Trace-Id') ?? undefined,
    answer: answerOf(contentType, await response.text()),
  };
}

function answerOf(contentType: string, text: string): BotAnswer {
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (type === HL7)
    return {
      kind: 'hl7',
      segments: text
        .split(/\r\n|\r|\n/)
        .filter(Boolean)
        .map((segment) => segment.split('|')),
    };
  if (type === 'application/json' || type === 'application/fhir+json') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { kind: 'text', text };
    }
    const resourceType = (value as { resourceType?: unknown } | null)?.resourceType;
    if (resourceType === 'OperationOutcome')
      return { kind: 'outcome', outcome: value as OperationOutcome };
    if (type === 'application/fhir+json' && typeof resourceType === 'string')
      return { kind: 'resource', resource: value as Resource };
    return { kind: 'json', value };
  }
  return { kind: 'text', text };
}

/** One execution as its AuditEvent records it. */
export interface ExecutionRecord {
  readonly auditEventId: string | undefined;
  readonly recorded: string | undefined;
  /** ok, error, timeout, memory */
  readonly status: string;
  readonly message: string | undefined;
  readonly durationMs: number | undefined;
  readonly caller: string | undefined;
  readonly traceId: string | undefined;
  readonly console: string | undefined;
  readonly stack: string | undefined;
}

interface AuditEventShape extends Resource {
  readonly recorded?: string;
  readonly outcomeDesc?: string;
  readonly agent?: readonly {
    readonly who?: { readonly identifier?: { readonly value?: string } };
  }[];
  readonly entity?: readonly {
    readonly detail?: readonly { readonly type: string; readonly valueString?: string }[];
  }[];
}

export function executionOf(event: Resource): ExecutionRecord {
  const audit = event as AuditEventShape;
  const details = audit.entity?.[0]?.detail ?? [];
  const detail = (type: string) => details.find((d) => d.type === type)?.valueString;
  const duration = detail('duration-ms');
  const status = detail('status') ?? 'unknown';
  return {
    auditEventId: audit.id,
    recorded: audit.recorded,
    status,
    message: status === 'ok' ? undefined : audit.outcomeDesc,
    durationMs: duration === undefined ? undefined : Number(duration),
    caller: audit.agent?.[0]?.who?.identifier?.value,
    traceId: detail('trace-id'),
    console: detail('console'),
    stack: detail('stack'),
  };
}

/** The bot's latest executions, newest first. */
export async function recentExecutions(
  client: FhirClient,
  botId: string,
  count = 20,
): Promise<ExecutionRecord[]> {
  const query = new URLSearchParams({
    entity: `Bot/${botId}`,
    _sort: '-_lastUpdated',
    _count: String(count),
  });
  const { body } = await client.json<Bundle>(`AuditEvent?${query}`);
  return (body.entry ?? [])
    .map((entry) => entry.resource)
    .filter((resource): resource is Resource => resource !== undefined)
    .map(executionOf);
}

/** The execution with this trace id among the bot's latest, whose AuditEvent holds its console. */
export async function executionByTraceId(
  client: FhirClient,
  botId: string,
  traceId: string,
): Promise<ExecutionRecord | undefined> {
  return (await recentExecutions(client, botId, 50)).find((record) => record.traceId === traceId);
}
