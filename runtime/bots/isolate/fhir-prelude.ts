/**
 * The preparation script that makes the `fhir` client: the isolate takes it from `__graphirFhir`.
 * `__graphirReviveEvent` gives the client each execution's base URL before the handler runs
 * (prelude scripts after this one that revive the event call it first).
 */
import { createFhirClient } from './fhir-client.js';
import { preparationHost } from './isolate-host.js';

interface Event {
  readonly baseUrl?: unknown;
}

const { client, setBaseUrl } = createFhirClient(preparationHost());
const globals = globalThis as { __graphirFhir?: object; __graphirReviveEvent?: unknown };
globals.__graphirFhir = client;
globals.__graphirReviveEvent = (event: Event) => {
  setBaseUrl(event?.baseUrl);
  return event;
};
