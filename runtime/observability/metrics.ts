/**
 * Prometheus metrics on a registry of their own (never prom-client's global one, so several
 * servers in one process, as in tests, do not collide). Served at `GET /metrics`
 * (runtime/http/metrics-routes.ts).
 */
import { Counter, Histogram, Registry, collectDefaultMetrics, type LabelValues } from 'prom-client';

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

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  observeRequest(labels: LabelValues<'method' | 'route' | 'status'>, durationMs: number): void {
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, durationMs / 1000);
  }

  observeBot(status: string, durationMs: number): void {
    this.botExecutions.inc({ status });
    this.botDuration.observe({ status }, durationMs / 1000);
  }
}

/** `GET /metrics`, Prometheus text format, no token. */
