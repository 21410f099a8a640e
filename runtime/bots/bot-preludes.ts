/**
 * What bots' isolates are prepared with: the web platform (web-platform.ts, lazy groups), the
 * HL7 v2 globals `Hl7Message`, `Hl7Segment`, `Hl7Field` and `Hl7Context` (isolate/hl7.ts,
 * Medplum's API), and for HL7 input, the event's text parsed into an Hl7Message before the
 * handler sees it.
 *
 * Compiling the HL7 classes costs more than the rest of an echo execution (docs/performance.md),
 * so they are compiled ahead (a script) only in isolates for bots that will use them, and
 * elsewhere on first read (a lazy group). Two arrays, always the same: sandbox workers prepare
 * isolates ahead for each.
 */
import { isolateModule } from './isolate-bundle.js';
import type { Prelude } from './sandbox-types.js';
import { WEB_PLATFORM } from './web-platform.js';
import { HL7_V2_ER7 } from '../hl7/media-type.js';

const GLOBALS = ['Hl7Message', 'Hl7Segment', 'Hl7Field', 'Hl7Context'] as const;

interface PreludeSets {
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
 */
export function preludesFor(hl7Input: boolean, code: string): readonly Prelude[] {
  const { lazy, eager } = preludeSets();
  return hl7Input || code.includes('Hl7') ? eager : lazy;
}
