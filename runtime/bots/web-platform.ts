/**
 * The web platform a bot expects, as lazy groups of globals (sandbox-types.ts `Prelude`): each
 * group is compiled in an isolate only when a bot first reads one of its globals, so a bot that
 * uses none of them pays for none. The code of each group is a module under isolate/, bundled
 * with its npm imports (isolate-bundle.ts); a group's factory gets the isolate host
 * (isolate/isolate-host.ts) for what needs the worker's natives.
 */
import { isolateModule } from './isolate-bundle.js';
import type { Prelude } from './sandbox-types.js';

/**
 * A group whose values are the exports of isolate/<module>.ts named by `globals`. A module that
 * needs the isolate host exports `withHost(host)`, whose values join its exports (web-fetch.ts:
 * `fetch`, made in the same evaluation as the classes it returns instances of).
 */
function group(globals: readonly string[], module: string): Prelude {
  return {
    globals,
    source: `(host) => { const m = ${isolateModule(module)}; return m.withHost ? { ...m, ...m.withHost(host) } : m; }`,
  };
}

export const WEB_PLATFORM: readonly Prelude[] = [
  group(
    [
      'Headers',
      'Request',
      'Response',
      'Blob',
      'File',
      'FormData',
      'AbortController',
      'AbortSignal',
      'DOMException',
      'Event',
      'EventTarget',
      'fetch',
    ],
    'web-fetch',
  ),
];
