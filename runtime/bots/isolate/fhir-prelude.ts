/**
 * The preparation script that makes the `fhir` client, which the isolate takes from
 * `__graphirFhir`. Compiling the client's implementation (fhir-client.ts) costs more than an echo
 * execution, so the client made here holds only a stub for each method: the first call of any
 * compiles the implementation, from the lazy global `__graphirFhirClient` (sandbox-isolate.ts),
 * whose getter is taken here and the global deleted before the bot's code runs. Methods Graphir
 * does not support fail here without it. `__graphirReviveEvent` keeps each execution's base URL
 * for the client (prelude scripts after this one that revive the event call it first).
 */
import type { createFhirClient, FhirClient } from './fhir-client.js';
import { CLIENT_METHODS } from './fhir-methods.js';
import { UNSUPPORTED_ASYNC, UNSUPPORTED_SYNC, unsupportedMessage } from './fhir-unsupported.js';
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
const implementation = (): Record<string, (...args: unknown[]) => unknown> => {
  if (!made) {
    const module = load() as NonNullable<Globals['__graphirFhirClient']>;
    made = module.createFhirClient(host, ErrorType);
    made.setBaseUrl(baseUrl);
  }
  return made.client as Record<string, (...args: unknown[]) => unknown>;
};

const client: Record<string, (...args: unknown[]) => unknown> = {};
for (const method of CLIENT_METHODS.split(' '))
  client[method] = (...args) => implementation()[method](...args);
for (const method of UNSUPPORTED_ASYNC.split(' '))
  client[method] = () => Promise.reject(new ErrorType(unsupportedMessage(method)));
for (const method of UNSUPPORTED_SYNC.split(' '))
  client[method] = () => {
    throw new ErrorType(unsupportedMessage(method));
  };
globals.__graphirFhir = Object.freeze(client);
globals.__graphirReviveEvent = (event) => {
  baseUrl = event?.baseUrl;
  made?.setBaseUrl(baseUrl);
  return event;
};
