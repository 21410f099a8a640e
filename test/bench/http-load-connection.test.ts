import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpLoadConnection, parseAnswer, requestBytes } from '../../bench/http-load-connection.js';

/** A Node server answering in the ways the load generator must read. */
let server: http.Server;
let url: URL;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      if (request.url === '/base/echo') {
        response.setHeader('Content-Type', 'application/json');
        response.end(
          JSON.stringify({ method: request.method, body, auth: request.headers.authorization }),
        );
      } else if (request.url === '/base/chunked') {
        // Written in pieces, without a length: Node sends them as chunks.
        response.write('first ');
        setTimeout(() => response.end('second'), 5);
      } else if (request.url === '/base/empty') {
        response.statusCode = 204;
        response.end();
      } else if (request.url === '/base/close') {
        request.socket.destroy();
      } else {
        response.statusCode = 404;
        response.end('no such thing');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/base/`);
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('HttpLoadConnection', () => {
  it('sends requests one after another over one connection, with headers and bodies', async () => {
    const connection = new HttpLoadConnection(url);
    try {
      const post = await connection.send(
        requestBytes(url, {
          method: 'POST',
          path: '/echo',
          headers: { Authorization: 'Bearer x', 'Content-Type': 'text/plain' },
          body: 'héllo',
        }),
      );
      expect(post.status).toBe(200);
      expect(JSON.parse(post.body.toString())).toEqual({
        method: 'POST',
        body: 'héllo',
        auth: 'Bearer x',
      });
      const chunked = await connection.send(requestBytes(url, { method: 'GET', path: '/chunked' }));
      expect(chunked).toMatchObject({ status: 200 });
      expect(chunked.body.toString()).toBe('first second');
      const empty = await connection.send(requestBytes(url, { method: 'GET', path: '/empty' }));
      expect(empty.status).toBe(204);
      expect(empty.body.length).toBe(0);
      const missing = await connection.send(requestBytes(url, { method: 'GET', path: '/nothing' }));
      expect(missing.status).toBe(404);
      expect(missing.body.toString()).toBe('no such thing');
    } finally {
      connection.close();
    }
  });

  it('fails the request in flight when the server closes the connection, and every later one', async () => {
    const connection = new HttpLoadConnection(url);
    try {
      await expect(
        connection.send(requestBytes(url, { method: 'GET', path: '/close' })),
      ).rejects.toThrow();
      await expect(
        connection.send(requestBytes(url, { method: 'GET', path: '/echo' })),
      ).rejects.toThrow();
    } finally {
      connection.close();
    }
  });
});

describe('parseAnswer', () => {
  const answer = 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello';

  it('waits for the rest of an answer that arrived in pieces', () => {
    for (let cut = 0; cut < answer.length; cut++) {
      expect(parseAnswer(Buffer.from(answer.slice(0, cut)))).toBe('incomplete');
    }
    const parsed = parseAnswer(Buffer.from(answer + 'HTTP/1.1'));
    expect(parsed).toMatchObject({ answer: { status: 200 }, length: answer.length });
  });

  it('reads chunks split anywhere', () => {
    const chunked =
      'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\na\r\n0123456789\r\n0\r\n\r\n';
    for (let cut = 0; cut < chunked.length; cut++) {
      expect(parseAnswer(Buffer.from(chunked.slice(0, cut)))).toBe('incomplete');
    }
    const parsed = parseAnswer(Buffer.from(chunked));
    if (parsed === 'incomplete' || parsed instanceof Error) throw new Error('not parsed');
    expect(parsed.answer.status).toBe(201);
    expect(parsed.answer.body.toString()).toBe('abc0123456789');
    expect(parsed.length).toBe(chunked.length);
  });

  it('refuses what it cannot read', () => {
    expect(parseAnswer(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n'))).toBeInstanceOf(Error);
    expect(parseAnswer(Buffer.from('HTTP/1.1 200 OK\r\n\r\nbody until close'))).toBeInstanceOf(
      Error,
    );
  });
});
