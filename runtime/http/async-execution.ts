/**
 * `Prefer: respond-async` on `$execute`: the answer is a Task, and the bot runs as a job on the
 * durable queue (runtime/jobs/), in whichever process takes it. The Task goes `requested` (job
 * stored) → `in-progress` (an attempt started) → `completed` with the output the synchronous call
 * would have answered, or `failed` with its OperationOutcome; when the job is abandoned (its last
 * attempt failed, or was cut off by a dying process), `failed` with the reason.
 */
import { Scopes } from '../access/scopes.js';
import type { AccessClaims } from '../access/token-service.js';
import type { BotInput } from '../bots/bot-input.js';
import { HL7_V2_ER7 } from '../bots/bot-input.js';
import type { BotExecution, BotOutcome, BotRunner } from '../bots/bot-runner.js';
import type { JobAttempt, JobKind, JobQueue } from '../jobs/job-queue.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { ResourceStore } from '../store/resource-store.js';
import { failure } from './bot-routes.js';

/** Everything another process needs to run the bot as the request asked. */
export interface AsyncExecutionPayload {
  readonly projectId: string;
  readonly taskId: string;
  readonly botId: string;
  /** The version current when the request came: the one that runs, whenever that is. */
  readonly botVersionId: string;
  readonly input: BotInput;
  /** The caller as its token said (scopes as text). */
  readonly caller: {
    readonly clientId: string;
    readonly scope: string;
    readonly admin: boolean;
  };
  readonly headers: BotExecution['headers'];
  readonly baseUrl: string;
}

const FINAL = new Set(['completed', 'failed', 'cancelled', 'rejected']);

export class AsyncExecutions {
  /** The job kind; its name is stored with each job. */
  readonly kind: JobKind<AsyncExecutionPayload> = {
    name: 'bot-execution',
    run: (payload, attempt) => this.run(payload, attempt),
    abandon: (payload, reason) => this.abandon(payload, reason),
  };

  constructor(
    private readonly store: ResourceStore,
    private readonly runner: BotRunner,
    private readonly queue: JobQueue,
  ) {
    queue.define(this.kind);
  }

  /** A `requested` Task for the execution and its job, stored in one transaction. */
  async enqueue(execution: BotExecution, caller: AccessClaims): Promise<FhirResource> {
    const { projectId, bot } = execution;
    const request = {
      resourceType: 'Task',
      status: 'requested',
      intent: 'order',
      code: { text: 'Bot execution' },
      focus: { reference: `Bot/${bot.id}` },
      authoredOn: new Date().toISOString(),
    };
    return this.store.db.transaction(async (tx) => {
      const [{ resource: task }] = await this.store.write(
        projectId,
        [{ kind: 'create', resource: request }],
        tx,
      );
      const payload: AsyncExecutionPayload = {
        projectId,
        taskId: task!.id!,
        botId: bot.id!,
        botVersionId: String((bot.meta as { versionId?: unknown } | undefined)?.versionId),
        input: execution.input,
        caller: { clientId: caller.clientId, scope: caller.scopes.toString(), admin: caller.admin },
        headers: execution.headers,
        baseUrl: execution.baseUrl,
      };
      await this.queue.enqueue(this.kind, payload, { tx });
      return task!;
    });
  }

  private async run(payload: AsyncExecutionPayload, attempt: JobAttempt): Promise<void> {
    const { projectId, taskId, botId, botVersionId } = payload;
    const task = await this.store.read(projectId, 'Task', taskId);
    // At least once: an attempt that ended the Task and died before the job was done with.
    if (FINAL.has(String(task.status))) return;
    const started = await this.update(projectId, {
      ...task,
      status: 'in-progress',
      executionPeriod: { start: new Date().toISOString() },
      ...(attempt.attempt > 1 ? { note: [{ text: `Attempt ${attempt.attempt}` }] } : {}),
    });
    const [version] = await this.store.history(projectId, 'Bot', botId, botVersionId);
    const outcome = await this.runner.execute({
      projectId,
      bot: version.resource!,
      input: payload.input,
      callerId: payload.caller.clientId,
      // The caller's access as it was when the request was accepted.
      caller: {
        clientId: payload.caller.clientId,
        projectId,
        scopes: Scopes.parse(payload.caller.scope),
        admin: payload.caller.admin,
        expires: Infinity,
      },
      headers: payload.headers,
      baseUrl: payload.baseUrl,
    });
    await this.update(projectId, finished(started, outcome));
  }

  /** The Task failed with `reason`, unless an attempt ended it already. */
  private async abandon(payload: AsyncExecutionPayload, reason: string): Promise<void> {
    const task = await this.store.read(payload.projectId, 'Task', payload.taskId);
    if (FINAL.has(String(task.status))) return;
    const outcome = {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'exception', diagnostics: reason }],
    };
    await this.update(payload.projectId, {
      ...task,
      status: 'failed',
      statusReason: { text: reason },
      output: [result('application/fhir+json', JSON.stringify(outcome))],
    });
  }

  private async update(projectId: string, task: FhirResource): Promise<FhirResource> {
    const [written] = await this.store.write(projectId, [
      { kind: 'update', resourceType: 'Task', id: task.id!, resource: task },
    ]);
    return written.resource!;
  }
}

/** The Task holds the answer the synchronous call would have given: the output, or its OperationOutcome. */
function finished(task: FhirResource, outcome: BotOutcome): FhirResource {
  const period = { ...(task.executionPeriod as object), end: new Date().toISOString() };
  if (outcome.status !== 'ok') {
    const error = failure(outcome);
    return {
      ...task,
      status: 'failed',
      executionPeriod: period,
      statusReason: { text: error.issues[0].diagnostics },
      output: [result('application/fhir+json', JSON.stringify(error.outcome))],
    };
  }
  const output =
    outcome.hl7 !== undefined
      ? result(HL7_V2_ER7, outcome.hl7)
      : typeof outcome.value === 'string'
        ? result('text/plain', outcome.value)
        : result('application/json', JSON.stringify(outcome.value ?? null));
  return { ...task, status: 'completed', executionPeriod: period, output: [output] };
}

function result(contentType: string, body: string) {
  return {
    type: { text: 'result' },
    valueAttachment: { contentType, data: Buffer.from(body).toString('base64') },
  };
}
