/**
 * The `fhir` client a bot gets, inside the isolate: MedplumClient's FHIR methods with its
 * signatures and return shapes. Each call to the server is one host call (`host.call(method,
 * ...args)`, answered on the main thread by bot-host.ts with the bot's access); what needs no
 * server (URLs, `searchOne`, `searchResources`' ResourceArray, `searchResourcePages`) is done
 * in the isolate. A failed call rejects with an Error made when the bot called, so that its stack
 * shows the bot's own line, whose message names the method (`fhir.readResource: …`) and which
 * carries the OperationOutcome as `outcome`, as Medplum's OperationOutcomeError does.
 *
 * Compiling the whole client costs more than an echo execution, so it is in parts, each compiled
 * on the first read of one of its methods (sandbox-fhir.ts): this module, the reads and writes
 * most bots call and what the other parts (fhir-requests.ts, fhir-search.ts, fhir-binary.ts,
 * fhir-unsupported.ts) build on, which they get as a `FhirCore`.
 */
import type { IsolateHost } from './isolate-host.js';

export type Methods = Record<string, unknown>;

/** What the other parts build on. */
export interface FhirCore {
  /** The isolate's Error, as it was while the isolate was prepared. */
  readonly ErrorType: ErrorConstructor;
  /** The execution's `event.baseUrl`. */
  readonly baseUrl: string;
  /** `host.call(wire, ...args)` for `method`, failing as described above. */
  call<T>(method: string, wire: string, args: unknown[]): Promise<T>;
  /** Work done in the isolate before (or instead of) a host call, failing the same way. */
  local<T>(method: string, work: () => Promise<T>): Promise<T>;
  /** `resource`, if it has a resourceType; else throws as Medplum does. */
  checked(resource: unknown): unknown;
  /** A request to `url` under the FHIR base. */
  request(
    method: string,
    verb: string,
    url: unknown,
    body?: unknown,
    type?: unknown,
  ): Promise<unknown>;
  /** A request body as `host.call` takes it (see bodyArgs below). */
  bodyArgs(body: unknown, contentType: unknown): [unknown, string | null];
}

type Resource = { readonly resourceType?: unknown; readonly id?: unknown };

/** Errors `named` made: one that passes through several layers of the client is named once. */
const namedErrors = new WeakSet<object>();

export function createFhirCore(
  host: IsolateHost,
  ErrorType: ErrorConstructor,
  baseUrl: string,
): { core: FhirCore; methods: Methods } {
  const call = <T>(method: string, wire: string, args: unknown[]): Promise<T> => {
    const failure = new ErrorType(method);
    return host.call(wire, ...args).then(undefined, (error: unknown) => {
      throw named(failure, method, error);
    }) as Promise<T>;
  };
  const local = <T>(method: string, work: () => Promise<T>): Promise<T> => {
    const failure = new ErrorType(method);
    let started: Promise<T>;
    try {
      started = work();
    } catch (error) {
      started = Promise.reject(error);
    }
    return started.then(undefined, (error: unknown) => {
      throw named(failure, method, error);
    });
  };
  const request = (method: string, verb: string, url: unknown, body?: unknown, type?: unknown) =>
    call(method, 'request', [verb, String(url), ...bodyArgs(body, type)]);
  const checked = (resource: unknown): unknown => {
    if (!resource || typeof (resource as Resource).resourceType !== 'string')
      throw new ErrorType('Missing resourceType');
    return resource;
  };

  const methods: Methods = {
    readResource: (type: unknown, id: unknown) => call('readResource', 'readResource', [type, id]),
    readReference: (reference: { reference?: unknown } | undefined) =>
      local('readReference', () => {
        const text = reference?.reference;
        if (typeof text !== 'string' || text === '') throw new ErrorType('Missing reference');
        const [type, id] = text.split('/');
        if (!type || !id) throw new ErrorType('Invalid reference');
        return call('readReference', 'readResource', [type, id]);
      }),
    createResource: (resource: unknown) =>
      call('createResource', 'createResource', [checked(resource)]),
    createResourceIfNoneExist: (resource: unknown, query: unknown) =>
      call('createResourceIfNoneExist', 'createResourceIfNoneExist', [
        checked(resource),
        String(query ?? ''),
      ]),
    updateResource: (resource: unknown) =>
      call('updateResource', 'updateResource', [checked(resource)]),
    patchResource: (type: unknown, id: unknown, operations: unknown) =>
      call('patchResource', 'patchResource', [type, id, operations]),
    deleteResource: (type: unknown, id: unknown) =>
      call('deleteResource', 'deleteResource', [type, id]),
  };
  return { core: { ErrorType, baseUrl, call, local, request, checked, bodyArgs }, methods };
}

/** `failure` (made when the bot called) with the method and the cause's message and outcome. */
function named(failure: Error, method: string, error: unknown): Error {
  if (typeof error === 'object' && error !== null && namedErrors.has(error)) return error as Error;
  const { message, outcome } = (error ?? {}) as { message?: unknown; outcome?: unknown };
  failure.message = `fhir.${method}: ${typeof message === 'string' ? message : String(error)}`;
  if (outcome !== undefined) Object.assign(failure, { outcome });
  namedErrors.add(failure);
  return failure;
}

/**
 * A request body as Medplum sends it: a string as it is (`text/plain` unless a type is given),
 * anything else as JSON (`application/fhir+json` unless a type is given).
 */
function bodyArgs(body: unknown, contentType: unknown): [unknown, string | null] {
  const type = typeof contentType === 'string' ? contentType : null;
  if (body === undefined) return [null, type];
  if (typeof body === 'string') return [{ text: body }, type ?? 'text/plain'];
  return [{ json: body }, type ?? 'application/fhir+json'];
}
