/**
 * The `fhir` client a bot gets, inside the isolate: each method sends its arguments to the main
 * thread (bot-host.ts), which runs it against the store with the bot's access.
 */
import type { IsolateHost } from './isolate-host.js';

const METHODS = [
  'readResource',
  'searchResources',
  'searchOne',
  'createResource',
  'updateResource',
  'deleteResource',
  'graphql',
] as const;

export function createFhirClient(host: IsolateHost): object {
  const client: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const method of METHODS) client[method] = (...args) => host.call(method, ...args);
  return Object.freeze(client);
}
