/**
 * The preparation script that makes the `fhir` client, which the isolate takes from
 * `__graphirFhir`. Compiling the client (fhir-client.ts) costs more than an echo execution, and
 * so would a stub for each of its methods in every isolate: the client given to the bot is a
 * proxy over a frozen empty object, and the first read of any of its properties compiles the
 * client from the lazy global `__graphirFhirClient` (sandbox-isolate.ts), whose getter is taken
 * here and the global deleted before the bot's code runs. `__graphirReviveEvent` keeps each
 * execution's base URL for the client (prelude scripts after this one that revive the event
 * call it first).
 */
import type { createFhirClient, FhirClient } from './fhir-client.js';
import { preparationHost } from './isolate-host.js';

interface Globals {
  __graphirFhir?: object;
  __graphirFhirClient?: { createFhirClient: typeof createFhirClient };
  __graphirReviveEvent?: (event: { baseUrl?: unknown }) => unknown;
}
const globals = globalThis as Globals;
const ErrorType = Error;
const host = preparationHost();

const load = Object.getOwnPropertyDescriptor(globals, '__graphirFhirClient')!.get!;
delete globals.__graphirFhirClient;
let baseUrl: unknown;
let made: FhirClient | undefined;
const implementation = (): Record<PropertyKey, unknown> => {
  if (!made) {
    const module = load() as NonNullable<Globals['__graphirFhirClient']>;
    made = module.createFhirClient(host, ErrorType);
    made.setBaseUrl(baseUrl);
  }
  return made.client as Record<PropertyKey, unknown>;
};

globals.__graphirFhir = new Proxy(Object.freeze({}), {
  get: (_target, name) => implementation()[name],
  has: (_target, name) => name in implementation(),
});
globals.__graphirReviveEvent = (event) => {
  baseUrl = event?.baseUrl;
  made?.setBaseUrl(baseUrl);
  return event;
};
