/**
 * `npm start`: production mode unless NODE_ENV says otherwise, then serve (serve.ts). graphql-js
 * reads NODE_ENV when it loads, and outside production it checks every `instanceof` it does for
 * a second copy of itself, a few per cent of a large query's time; so it is set before anything
 * loads.
 */
process.env.NODE_ENV ??= 'production';
const { loadConfig } = await import('./server/config.js');
const { serve } = await import('./server/serve.js');
await serve(loadConfig());
// Exit code 1 when the supervisor saw a process fail (serve.ts); timers left by libraries do not hold it.
process.exit();
