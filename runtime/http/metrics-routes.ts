/** `GET /metrics`: the server's Prometheus metrics, in the text format. */
import Router from '@koa/router';
import type { Metrics } from '../observability/metrics.js';

export function metricsRoutes(metrics: Metrics): Router {
  const router = new Router();
  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.exposition();
  });
  return router;
}
