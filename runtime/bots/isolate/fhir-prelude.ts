/** The preparation script that makes the `fhir` client: the isolate takes it from this global. */
import { createFhirClient } from './fhir-client.js';
import { preparationHost } from './isolate-host.js';

(globalThis as { __graphirFhir?: object }).__graphirFhir = createFhirClient(preparationHost());
