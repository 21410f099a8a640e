/**
 * What the engines' errors mean to a client. Some say the database is out of reach (503: the same
 * request may succeed later); some that it clashed with another request (409: sent again, it
 * succeeds); some that the request holds what no column can store (its fault, 400 or 422); the
 * rest are internal errors, passed on as they came.
 */
import pg from 'pg';
import { FhirError, fhirError } from '../model/fhir-error.js';

/**
 * The database could not be reached, or dropped the connection: nothing is wrong with the
 * request, and the same request may succeed later.
 */
export class DatabaseUnavailableError extends FhirError {
  constructor(cause: unknown) {
    super(
      503,
      [
        {
          severity: 'error',
          code: 'transient',
          diagnostics: 'The database is not available; try again shortly',
        },
      ],
      {},
      `The database is not available: ${(cause as Error)?.message ?? String(cause)}`,
    );
    this.cause = cause;
  }
}

/** SQLSTATEs of a server that is going away or not there yet: class 08, 57P01–57P03, 53300. */
const UNAVAILABLE_STATES = /^(08...|57P0[123]|53300)$/;
/** pg's own errors for a connection that is gone or never came (they carry no code). */
const CONNECTION_LOST =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end)/;
/**
 * Text PostgreSQL cannot hold: U+0000 in a text value (22021) or a jsonb string (22P05). Only a
 * client puts it there — in an id, a search value, a client id, a name — and no stored value can
 * ever contain it, so it is the client's error wherever it turns up.
 */
const UNSTORABLE_TEXT_STATES = new Set(['22021', '22P05']);
/**
 * program_limit_exceeded: on a write, a searchable value (an identifier, a name) too long for a
 * B-tree index entry (about 2.7 kB compressed). The resource is valid FHIR that this server
 * cannot index, which FHIR answers with 422.
 */
const PROGRAM_LIMIT_EXCEEDED = '54000';
/**
 * deadlock_detected and serialization_failure: PostgreSQL ended this transaction because of
 * another one running at the same time. Nothing is wrong with the request; sent again, it
 * succeeds.
 */
const CLASHED_STATES = new Set(['40P01', '40001']);

/** `error` as a FhirError when it means something to the client; else as it came. */
export function classifyDatabaseError(error: unknown): unknown {
  if (error instanceof FhirError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === PROGRAM_LIMIT_EXCEEDED)
    return fhirError(422, 'too-costly', 'A searchable value is too long for the search index');
  if (typeof code === 'string' && CLASHED_STATES.has(code))
    return fhirError(409, 'transient', 'The request clashed with another at the same time; retry');
  if (typeof code === 'string' && UNSTORABLE_TEXT_STATES.has(code))
    return fhirError(400, 'invalid', 'The request holds U+0000, which no value here can contain');
  const outOfReach =
    error instanceof pg.DatabaseError
      ? typeof code === 'string' && UNAVAILABLE_STATES.test(code)
      : // Socket errors (ECONNREFUSED, ECONNRESET, ENOTFOUND, …) and pg's connection errors.
        (typeof code === 'string' && /^E[A-Z_]+$/.test(code) && 'syscall' in (error as object)) ||
        CONNECTION_LOST.test((error as Error)?.message ?? '');
  return outOfReach ? new DatabaseUnavailableError(error) : error;
}

/** `work`, its failure classified. */
export function classified<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: unknown) => Promise.reject(classifyDatabaseError(error)));
}
