import Router from '@koa/router';

/** `GET /healthz`: 200 once the server is ready; it is mounted only after start-up finished. */
export function healthRoutes(): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  return router;
}
