/**
 * Requests Node's HTTP parser refuses before Koa sees them — headers over Node's limit
 * (`--max-http-header-size`, 16 KiB: the URL, header names and values together), a malformed
 * request line — are answered as every other failure is, with an OperationOutcome, where Node
 * alone would send an empty 431 or 400.
 */
import type { Duplex } from 'node:stream';
import type { IssueCode } from '../model/fhir-error.js';

/** Node's own choice of status per parser error (lib/_http_server.js, socketOnError). */
const STATUS: Record<string, [number, string, IssueCode, string]> = {
  HPE_HEADER_OVERFLOW: [
    431,
    'Request Header Fields Too Large',
    'too-costly',
    'The request line and headers are larger than the server accepts',
  ],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [
    413,
    'Payload Too Large',
    'too-costly',
    'The chunk extensions are larger than the server accepts',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'timeout', 'The request took too long'],
};
const BAD_REQUEST: [number, string, IssueCode, string] = [
  400,
  'Bad Request',
  'structure',
  'The request is not valid HTTP',
];

/** The server's `clientError` listener. */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // As Node does: answer only when nothing of a response has gone out on this connection yet.
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, reason, code, diagnostics] = STATUS[error.code ?? ''] ?? BAD_REQUEST;
  const body = JSON.stringify({
    resourceType: 'OperationOutcome',
    issue: [{ severity: 'error', code, diagnostics }],
  });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      'Content-Type: application/fhir+json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
