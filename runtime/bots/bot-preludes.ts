/**
 * What bots' isolates are prepared with: the web platform (web-platform.ts, lazy groups), the
 * HL7 v2 globals `Hl7Message`, `Hl7Segment`, `Hl7Field` and `Hl7Context` (isolate/hl7.ts,
 * Medplum's API), and for HL7 input, the event's text parsed into an Hl7Message before the
 * handler sees it.
 *
 * Compiling the HL7 classes costs more than the rest of an echo execution (docs/performance.md),
 * so they are compiled ahead (a script) only in isolates for bots that will use them, and
 * elsewhere on first read (a lazy group). Even lazy, the web platform's globals cost a third of
 * an echo's preparation to define, so a bot whose code cannot reach any of them gets them only
 * if its `fhir` client loads (deferred groups). Three arrays, always the same: sandbox workers
 * prepare isolates ahead for each.
 */
import { isolateModule } from './isolate-bundle.js';
import { looksLikeModule } from './sandbox-helpers.js';
import type { Prelude } from './sandbox-types.js';
import { WEB_PLATFORM } from './web-platform.js';
import { HL7_V2_ER7 } from '../hl7/media-type.js';

const GLOBALS = ['Hl7Message', 'Hl7Segment', 'Hl7Field', 'Hl7Context'] as const;

/**
 * Words by which code can reach the web platform: its globals' names, Date's and Number's locale
 * methods (sandbox-locale.ts), and what strict code reaches the global object through to read a
 * global by a name it computes (`globalThis[name]`, `self`, `window`, `global`, `eval`,
 * `Function('return this')`, `({}).constructor.constructor`).
 */
const REACHES_WEB_PLATFORM = new RegExp(
  `\\b(?:${[
    ...WEB_PLATFORM.flatMap((group) => (typeof group === 'string' ? [] : group.globals)),
    'toLocale\\w*',
    'globalThis',
    'self',
    'window',
    'global',
    'eval',
    'Function',
    'constructor',
  ].join('|')})\\b`,
);

interface PreludeSets {
  /** For bots whose code cannot reach the web platform: defined only if the client loads. */
  readonly plain: readonly Prelude[];
  /** For bots that may use the classes: compiled on first read of any of them. */
  readonly lazy: readonly Prelude[];
  /**
   * For HL7 input and bots that name the classes: compiled ahead, non-enumerable like built-in
   * classes; and `__graphirReviveEvent`, which parses HL7 input (`{__hl7: text}`) with the
   * class it was given, whatever the bot later does to the globals. Only an HL7 request's event is
   * revived: a JSON object or a form with an `__hl7` key is the client's data.
   */
  readonly eager: readonly Prelude[];
}

/** Made on first use: bundling the classes is not for a server that runs no bot. */
let sets: PreludeSets | undefined;

function preludeSets(): PreludeSets {
  if (sets) return sets;
  const classes = isolateModule('hl7');
  sets = {
    plain: WEB_PLATFORM.map((group) =>
      typeof group === 'string' ? group : { ...group, deferred: true },
    ),
    lazy: [{ globals: GLOBALS, source: `() => ${classes}` }, ...WEB_PLATFORM],
    eager: [
      `(() => {
  const classes = ${classes};
  for (const name of ${JSON.stringify(GLOBALS)}) {
    Object.defineProperty(globalThis, name, { configurable: true, writable: true, value: classes[name] });
  }
  const { Hl7Message } = classes;
  globalThis.__graphirReviveEvent = (event) =>
    event.contentType === '${HL7_V2_ER7}' ? { ...event, input: Hl7Message.parse(event.input.__hl7) } : event;
})();`,
      ...WEB_PLATFORM,
    ],
  };
  return sets;
}

/**
 * The preludes of an execution: HL7 input always runs with the eager set, so only it parses
 * that input; so does code that names a class (or merely `Hl7`: a false guess costs only time).
 * Code that cannot reach the web platform runs with the plain set: module code in which none of
 * REACHES_WEB_PLATFORM's words occurs (CommonJS code is not strict: a function's `this` is the
 * global object). A false guess either way costs only time, but for code that builds a word out
 * of pieces at run time (`globalThis`'s name among them) and so reads a global whose name is
 * nowhere in it: that finds it only once the `fhir` client has loaded.
 */
export function preludesFor(hl7Input: boolean, code: string): readonly Prelude[] {
  const { plain, lazy, eager } = preludeSets();
  if (hl7Input || code.includes('Hl7')) return eager;
  return looksLikeModule(code) && !REACHES_WEB_PLATFORM.test(code) ? plain : lazy;
}
