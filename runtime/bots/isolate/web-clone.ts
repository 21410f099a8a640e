/**
 * structuredClone, by @ungap/structured-clone's serializer (cycles, Date, RegExp, Map, Set,
 * ArrayBuffers and views, errors, boxed primitives). What it cannot clone (a function, a
 * symbol) is a DataCloneError, as in browsers. (Its default export looks for a global
 * structuredClone, and finds none: the lazy global is not there while its group loads.)
 */
import { deserialize, serialize } from '@ungap/structured-clone';

function dataCloneError(message: string): Error {
  const type = (globalThis as { DOMException?: new (message: string, name: string) => Error })
    .DOMException;
  return type ? new type(message, 'DataCloneError') : new TypeError(message);
}

export function structuredClone<T>(value: T, options?: { transfer?: unknown[] }): T {
  if (arguments.length === 0) throw new TypeError('structuredClone needs a value');
  if (options?.transfer?.length) throw dataCloneError('Transferring is not supported');
  let records: unknown;
  try {
    records = serialize(value);
  } catch (error) {
    throw dataCloneError(`The value could not be cloned: ${(error as Error).message}`);
  }
  return deserialize(records as never) as T;
}
