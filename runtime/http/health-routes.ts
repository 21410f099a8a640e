import Router from '@koa/router';
import { databaseAnswers, type Queryable } from '../store/database.js';

/**
 * `GET /healthz`: 200 when the server is ready — it is mounted only after start-up finished —
 * and its database answers; while the database is out of reach, 503 (error-middleware.ts). The
 * body names the process that answered: several serve one port (docs/scale-out.md).
 */
export function healthRoutes(db: Queryable): Router {
  const router = new Router();
  router.get('/healthz', async (ctx) => {
    await databaseAnswers(db);
    ctx.body = { status: 'ok', pid: process.pid };
  });
  return router;
}
