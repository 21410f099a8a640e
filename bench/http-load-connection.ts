/**
 * One keep-alive HTTP/1.1 connection of the load generator: it writes a request prepared as bytes
 * and reads the answer's status line, headers and body (Content-Length or chunked), one request at
 * a time. Node's http client and undici cost the load process 20–30 µs of CPU a request; this
 * costs about 12 (measured beside them, REST reads at concurrency 16). On a two-core machine the
 * load generator's CPU is taken from the server under test, so a cheaper one measures the server.
 */
import net from 'node:net';

export interface HttpAnswer {
  readonly status: number;
  readonly body: Buffer;
}

/** A request's bytes: request line, headers (Host and Content-Length added) and body. */
export function requestBytes(
  url: URL,
  request: {
    readonly method: string;
    readonly path: string;
    readonly headers?: Record<string, string>;
    readonly body?: string;
  },
): Buffer {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const lines = [
    `${request.method} ${url.pathname.replace(/\/$/, '')}${request.path} HTTP/1.1`,
    `Host: ${url.host}`,
    ...Object.entries(request.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    ...(body ? [`Content-Length: ${body.length}`] : []),
  ];
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return body ? Buffer.concat([head, body]) : head;
}

export class HttpLoadConnection {
  private readonly socket: net.Socket;
  private readonly ready: Promise<void>;
  private received: Buffer = Buffer.alloc(0);
  private waiting?: { resolve(answer: HttpAnswer): void; reject(error: Error): void };
  private failure?: Error;

  constructor(url: URL) {
    this.socket = net.connect(Number(url.port || 80), url.hostname);
    this.socket.setNoDelay(true);
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk: Buffer) => {
      this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
      this.answer();
    });
    this.socket.on('error', (error) => this.fail(error));
    this.socket.on('close', () => this.fail(new Error('the server closed the connection')));
  }

  async send(bytes: Buffer): Promise<HttpAnswer> {
    await this.ready;
    if (this.failure) throw this.failure;
    if (this.waiting) throw new Error('one request at a time on a connection');
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(bytes);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private fail(error: Error): void {
    this.failure ??= error;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(this.failure);
  }

  /** Hands over the answer once all of it has arrived. */
  private answer(): void {
    if (!this.waiting) return;
    const parsed = parseAnswer(this.received);
    if (parsed === 'incomplete') return;
    if (parsed instanceof Error) return this.fail(parsed);
    this.received = this.received.subarray(parsed.length);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting.resolve(parsed.answer);
  }
}

/** The first whole answer in `bytes` and how many bytes it took, or 'incomplete'. */
export function parseAnswer(
  bytes: Buffer,
): { answer: HttpAnswer; length: number } | 'incomplete' | Error {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return 'incomplete';
  const head = bytes.toString('latin1', 0, headEnd);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
  if (!status) return new Error(`not an HTTP answer: ${head.slice(0, 100)}`);
  const bodyStart = headEnd + 4;
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (length) {
    const end = bodyStart + Number(length[1]);
    if (bytes.length < end) return 'incomplete';
    return { answer: { status, body: bytes.subarray(bodyStart, end) }, length: end };
  }
  if (/\r\ntransfer-encoding: *chunked/i.test(head)) return parseChunked(bytes, bodyStart, status);
  if (status === 204 || status === 304) {
    return { answer: { status, body: Buffer.alloc(0) }, length: bodyStart };
  }
  return new Error(`an answer with neither Content-Length nor chunks: ${head.slice(0, 200)}`);
}

function parseChunked(
  bytes: Buffer,
  start: number,
  status: number,
): { answer: HttpAnswer; length: number } | 'incomplete' | Error {
  const chunks: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return 'incomplete';
    const size = parseInt(bytes.toString('latin1', at, lineEnd), 16);
    if (Number.isNaN(size)) return new Error('a chunk without a size');
    const dataStart = lineEnd + 2;
    if (size === 0) {
      // No trailers are sent to the bench: the last chunk ends with an empty line.
      if (bytes.length < dataStart + 2) return 'incomplete';
      return { answer: { status, body: Buffer.concat(chunks) }, length: dataStart + 2 };
    }
    if (bytes.length < dataStart + size + 2) return 'incomplete';
    chunks.push(bytes.subarray(dataStart, dataStart + size));
    at = dataStart + size + 2;
  }
}
