/**
 * The web platform a bot expects, as lazy groups of globals (sandbox-types.ts `Prelude`): each
 * group is compiled in an isolate only when a bot first reads one of its globals, so a bot that
 * uses none of them pays for none. The code of each group is a module under isolate/, bundled
 * with its npm imports (isolate-bundle.ts); a group's factory gets the isolate host
 * (isolate/isolate-host.ts) for what needs the worker's natives.
 */
import { isolateModule } from './isolate-bundle.js';
import type { Prelude } from './sandbox-types.js';

/** A group whose values are the exports of isolate/<module>.ts named by `globals`. */
function group(globals: readonly string[], module: string): Prelude {
  return { globals, source: `() => (${isolateModule(module)})` };
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
    ],
    'web-fetch',
  ),
];
