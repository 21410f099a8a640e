/**
 * Prometheus metrics on a registry of their own (never prom-client's global one, so several
 * servers in one process, as in tests, do not collide). Served at `GET /metrics`
 * (runtime/http/metrics-routes.ts): this process's, or under a supervisor every process's merged
 * (cluster-metrics.ts).
 */
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type LabelValues,
} from 'prom-client';
import { clusterExposition } from './cluster-metrics.js';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'graphir_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'graphir_http_request_duration_seconds',
    help: 'HTTP request latency, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly graphqlCost = new Histogram({
    name: 'graphir_graphql_query_cost',
    help: 'Estimated cost of GraphQL queries (see query-limits), refused ones included',
    buckets: [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000],
    registers: [this.registry],
  });
  readonly graphqlExecutions = new Counter({
    name: 'graphir_graphql_executions_total',
    help: 'GraphQL operations executed, by engine (compiled for a recurring query, or interpreted)',
    labelNames: ['engine'] as const,
    registers: [this.registry],
  });
  readonly botExecutions = new Counter({
    name: 'graphir_bot_executions_total',
    help: 'Bot executions, by status (ok, error, timeout, memory)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  readonly botDuration = new Histogram({
    name: 'graphir_bot_execution_duration_seconds',
    help: 'Bot execution time in the sandbox, by status',
    labelNames: ['status'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  /** Set by the job queue: jobs waiting to run, by kind, read from the database when scraped. */
  private queuedJobs: () => Promise<Map<string, number>> = async () => new Map();
  readonly jobsQueued = new Gauge({
    name: 'graphir_jobs_queued',
    help: 'Jobs waiting in the queue (due, or retried later), by kind, all processes together',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    // Every process reads the same count from the database: merged, it is not summed.
    aggregator: 'max',
    collect: async () => {
      this.jobsQueued.reset();
      for (const [kind, count] of await this.queuedJobs()) this.jobsQueued.set({ kind }, count);
    },
  });
  readonly jobsRunning = new Gauge({
    name: 'graphir_jobs_running',
    help: 'Jobs running in this process, by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly jobWait = new Histogram({
    name: 'graphir_job_wait_seconds',
    help: 'Time from enqueue to the start of a job (its first attempt), by kind',
    labelNames: ['kind'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly jobAttempts = new Counter({
    name: 'graphir_job_attempts_total',
    help: 'Job attempts ended in this process, by kind and outcome: completed, retried (failed, tried again later), failed (last attempt failed: the job is abandoned)',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly subscriptionDeliveries = new Counter({
    name: 'graphir_subscription_deliveries_total',
    help: 'Subscription delivery attempts ended in this process, by channel (rest-hook, bot) and outcome (delivered, failed)',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly subscriptionRetries = new Counter({
    name: 'graphir_subscription_delivery_retries_total',
    help: 'Subscription delivery attempts after the first (retries), by channel',
    labelNames: ['channel'] as const,
    registers: [this.registry],
  });
  readonly subscriptionFailures = new Counter({
    name: 'graphir_subscription_delivery_failures_total',
    help: 'Subscription deliveries abandoned, the Subscription set to error: after their last attempt failed, or at once when the author client no longer exists; by channel',
    labelNames: ['channel'] as const,
    registers: [this.registry],
  });
  readonly subscriptionLatency = new Histogram({
    name: 'graphir_subscription_delivery_latency_seconds',
    help: 'Time from the write that triggered a delivery to the start of its first attempt, by channel',
    labelNames: ['channel'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  /** The text `GET /metrics` answers. */
  readonly exposition: () => Promise<string>;

  /**
   * `clusterWorker`: this process is one of several a supervisor runs on one port, and
   * `exposition` gives all of theirs merged.
   */
  constructor(options: { defaultMetrics?: boolean; clusterWorker?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.exposition = options.clusterWorker
      ? clusterExposition(this.registry)
      : () => this.registry.metrics();
  }

  observeRequest(labels: LabelValues<'method' | 'route' | 'status'>, durationMs: number): void {
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, durationMs / 1000);
  }

  /** Where `graphir_jobs_queued` comes from. */
  countQueuedJobs(source: () => Promise<Map<string, number>>): void {
    this.queuedJobs = source;
  }

  observeBot(status: string, durationMs: number): void {
    this.botExecutions.inc({ status });
    this.botDuration.observe({ status }, durationMs / 1000);
  }
}

/** `GET /metrics`, Prometheus text format, no token. */
