/**
 * The web platform a bot expects, as lazy groups of globals (sandbox-types.ts `Prelude`): each
 * group is compiled in an isolate only when a bot first reads one of its globals, so a bot that
 * uses none of them pays for none. The code of each group is a module under isolate/, bundled
 * with its npm imports (isolate-bundle.ts); a group that needs the worker (timers, URL, crypto, Intl)
 * gets the isolate host (isolate/isolate-host.ts) in its factory.
 */
import { isolateModule } from './isolate-bundle.js';
import type { Prelude } from './sandbox-types.js';

/** A group whose values are the exports of isolate/<module>.ts named by `globals`. */
function group(globals: readonly string[], module: string): Prelude {
  return { globals, source: `() => (${isolateModule(module)})` };
}

/** A group whose values are made by isolate/<module>.ts's `factory` from the host. */
function hostGroup(globals: readonly string[], module: string, factory: string): Prelude {
  return { globals, source: `(host) => (${isolateModule(module)}).${factory}(host)` };
}

export const WEB_PLATFORM: readonly Prelude[] = [
  hostGroup(
    ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask'],
    'web-timers',
    'timerGlobals',
  ),
  // `fetch` with the classes it returns instances of, in one evaluation.
  hostGroup(
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
    'fetchGlobals',
  ),
  hostGroup(['URL', 'URLSearchParams'], 'web-url', 'urlGlobals'),
  group(['TextEncoder', 'TextDecoder', 'atob', 'btoa'], 'web-text'),
  group(['Buffer'], 'web-buffer'),
  hostGroup(['crypto'], 'web-crypto', 'cryptoGlobals'),
  group(['structuredClone'], 'web-clone'),
  hostGroup(['Intl'], 'web-intl', 'intlGlobals'),
  group(['WebSocket'], 'web-websocket'),
];
