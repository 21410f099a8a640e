/**
 * The one mapping from a FHIR status (and issue code) to a GraphQL error's `extensions.code`,
 * for every status the server answers; graphql-over-http.test.ts sees the codes over HTTP.
 */
import { describe, expect, it } from 'vitest';
import { codeOfStatus } from '../../runtime/graphql/error-codes.js';
import type { IssueCode } from '../../runtime/model/fhir-error.js';

describe('codeOfStatus', () => {
  it.each([
    [400, 'invalid', 'execution', 'BAD_USER_INPUT'],
    [400, 'structure', 'request', 'BAD_REQUEST'],
    [400, 'too-costly', 'execution', 'QUERY_TOO_COMPLEX'],
    [400, 'too-costly', 'request', 'QUERY_TOO_COMPLEX'],
    [401, 'login', 'request', 'UNAUTHENTICATED'],
    [403, 'forbidden', 'execution', 'FORBIDDEN'],
    [404, 'not-found', 'execution', 'NOT_FOUND'],
    [410, 'deleted', 'execution', 'NOT_FOUND'],
    [405, 'not-supported', 'request', 'BAD_REQUEST'],
    [406, 'not-supported', 'request', 'BAD_REQUEST'],
    [408, 'timeout', 'execution', 'BAD_REQUEST'],
    [409, 'duplicate', 'execution', 'CONFLICT'],
    [412, 'conflict', 'execution', 'CONFLICT'],
    [413, 'too-costly', 'request', 'QUERY_TOO_COMPLEX'],
    [415, 'not-supported', 'request', 'BAD_REQUEST'],
    [422, 'too-costly', 'execution', 'BAD_USER_INPUT'],
    [429, 'throttled', 'execution', 'TOO_MANY_REQUESTS'],
    [500, 'exception', 'execution', 'INTERNAL_SERVER_ERROR'],
    [503, 'transient', 'request', 'SERVICE_UNAVAILABLE'],
  ] as const)('%i %s while %s: %s', (status, issue, stage, code) => {
    expect(codeOfStatus(status, issue as IssueCode, stage)).toBe(code);
  });
});
