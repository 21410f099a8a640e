/**
 * The web platform inside the bot sandbox (runtime/bots/web-platform.ts): each API as browsers
 * and Node behave for the common calls, bounded by the bot's time and memory limits; through the
 * sandbox pool with the bot runner's preludes, and over HTTP `$execute` for a few.
 */
import { createHash } from 'node:crypto';
import { bundleBot } from '../../runtime/cli/bot-bundle.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxPool, type SandboxRequest } from '../../runtime/bots/sandbox-pool.js';
import { WEB_PLATFORM } from '../../runtime/bots/web-platform.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const MB = 1024 * 1024;
const noHost: SandboxRequest['host'] = (method) => Promise.reject(new Error(`no ${method}`));

let pool: SandboxPool;

/** Runs `body` as the body of an async ES module handler. */
function run(body: string, options: Partial<SandboxRequest> = {}) {
  return pool.run({
    code: `export async function handler(fhir, event) {\n${body}\n}`,
    event: {},
    preludes: WEB_PLATFORM,
    timeoutMs: 5000,
    memoryBytes: 32 * MB,
    host: noHost,
    ...options,
  });
}

async function value(body: string): Promise<unknown> {
  const result = await run(body);
  if (result.status !== 'ok') throw new Error(JSON.stringify(result));
  return result.value;
}

beforeAll(() => {
  pool = new SandboxPool({ size: 1 });
});

afterAll(async () => {
  await pool.close();
});

describe('timers', () => {
  it('runs timeouts in the order they are due, microtasks first, with their arguments', async () => {
    const order = await value(`
      const order = [];
      setTimeout((a, b) => order.push('late ' + a + b), 120, 'x', 'y');
      setTimeout(() => order.push('early'), 10);
      setTimeout(() => order.push('same 1'), 60);
      setTimeout(() => order.push('same 2'), 60);
      queueMicrotask(() => order.push('microtask'));
      const cleared = setTimeout(() => order.push('cleared'), 5);
      clearTimeout(cleared);
      clearTimeout(undefined);
      await new Promise((resolve) => setTimeout(resolve, 200));
      return order;`);
    expect(order).toEqual(['microtask', 'early', 'same 1', 'same 2', 'late xy']);
  });

  it('repeats an interval until cleared, also from its own callback', async () => {
    const ticks = await value(`
      let ticks = 0;
      await new Promise((resolve) => {
        const id = setInterval(() => {
          if (++ticks === 3) { clearInterval(id); resolve(); }
        }, 5);
      });
      await new Promise((resolve) => setTimeout(resolve, 30));
      return ticks;`);
    expect(ticks).toBe(3);
  });

  it('still reports a promise nothing can settle, and drops timers left when the bot ends', async () => {
    const never = await run(`
      clearTimeout(setTimeout(() => {}, 10));
      await new Promise(() => {});`);
    expect(never).toMatchObject({
      status: 'error',
      message: expect.stringMatching(/never settles/),
    });
    const left = await run(`setInterval(() => console.log('tick'), 1); return 'done';`);
    expect(left).toMatchObject({ status: 'ok', value: 'done', console: '' });
  });

  it('times a bot out whose timers run past its time limit', async () => {
    const loop = await run(`setInterval(() => {}, 1); await new Promise(() => {});`, {
      timeoutMs: 300,
    });
    expect(loop.status).toBe('timeout');
    const late = await run(`await new Promise((resolve) => setTimeout(resolve, 60_000));`, {
      timeoutMs: 300,
    });
    expect(late.status).toBe('timeout');
    expect(late.durationMs).toBeLessThan(30_000);
  });

  it('bounds the timers pending, and fails the bot on a throwing callback', async () => {
    const flood = await run(`for (;;) setInterval(() => {}, 1000);`);
    expect(flood).toMatchObject({
      status: 'error',
      message: expect.stringMatching(/More than 10000 timers pending/),
    });
    const throwing = await run(`
      setTimeout(() => { throw new Error('from a timer'); }, 1);
      await new Promise((resolve) => setTimeout(resolve, 50));`);
    expect(throwing).toMatchObject({ status: 'error', message: 'from a timer' });
    const notFunction = await run(`setTimeout('1 + 1', 1);`);
    expect(notFunction).toMatchObject({
      status: 'error',
      message: expect.stringMatching(/function/),
    });
  });
});

describe('URL and URLSearchParams', () => {
  it('parse, resolve and serialize as the URL Standard says', async () => {
    const result = await value(`
      const url = new URL('https://user:pw@例え.jp:8080/a/../b?x=1#frag');
      url.searchParams.append('q', 'é &');
      const relative = new URL('../c?d=1', 'http://example.com/a/b/');
      relative.port = 'not a port';
      relative.hash = 'h';
      const params = new URLSearchParams('?a=1&b=x+y%21&a=2');
      params.delete('b');
      params.set('c', '3');
      let invalid;
      try { new URL('no scheme'); } catch (error) { invalid = [error instanceof TypeError, error.message]; }
      return {
        href: url.href, origin: url.origin, host: url.host, pathname: url.pathname,
        search: url.search, username: url.username, relative: relative.href,
        params: params.toString(), all: params.getAll('a'), entries: [...new URLSearchParams({ k: 'v' })],
        invalid, canParse: [URL.canParse('x:'), URL.canParse('/x')], json: JSON.stringify({ u: new URL('http://a') }),
      };`);
    expect(result).toEqual({
      href: 'https://user:pw@xn--r8jz45g.jp:8080/b?x=1&q=%C3%A9+%26#frag',
      origin: 'https://xn--r8jz45g.jp:8080',
      host: 'xn--r8jz45g.jp:8080',
      pathname: '/b',
      search: '?x=1&q=%C3%A9+%26',
      username: 'user',
      relative: 'http://example.com/a/c?d=1#h',
      params: 'a=1&a=2&c=3',
      all: ['1', '2'],
      entries: [['k', 'v']],
      invalid: [true, 'Invalid URL: no scheme'],
      canParse: [true, false],
      json: '{"u":"http://a/"}',
    });
  });
});

describe('text, base64 and Buffer', () => {
  it('encode and decode UTF-8 as TextEncoder and TextDecoder do', async () => {
    const result = await value(`
      const bytes = new TextEncoder().encode('h€😀\\ud800');
      const decoder = new TextDecoder();
      const streamed = decoder.decode(bytes.slice(0, 3), { stream: true }) + decoder.decode(bytes.slice(3));
      let fatal;
      try { new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])); } catch (e) { fatal = e.name; }
      let label;
      try { new TextDecoder('windows-1252'); } catch (e) { label = e.name; }
      const into = new Uint8Array(4);
      return { bytes: [...bytes], text: new TextDecoder().decode(bytes), streamed,
        bom: new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])),
        lossy: new TextDecoder().decode(new Uint8Array([0x41, 0xc3, 0x42])), fatal, label,
        into: new TextEncoder().encodeInto('a€b', into), intoBytes: [...into] };`);
    expect(result).toEqual({
      bytes: [...new TextEncoder().encode('h€😀\ud800')],
      text: 'h€😀\ufffd',
      streamed: 'h€😀\ufffd',
      bom: 'A',
      lossy: 'A\ufffdB',
      fatal: 'TypeError',
      label: 'RangeError',
      into: { read: 2, written: 4 },
      intoBytes: [0x61, 0xe2, 0x82, 0xac],
    });
  });

  it('runs atob and btoa as browsers do', async () => {
    const result = await value(`
      let bad;
      try { atob('a'); } catch (e) { bad = [e.name, e instanceof DOMException]; }
      let wide;
      try { btoa('€'); } catch (e) { wide = e.name; }
      return [btoa('hello'), btoa('\\xff\\xfe'), atob('aGVs bG8='), atob('aGVsbG8'), bad, wide];`);
    expect(result).toEqual([
      'aGVsbG8=',
      '//4=',
      'hello',
      'hello',
      ['InvalidCharacterError', true],
      'InvalidCharacterError',
    ]);
  });

  it('gives Node’s Buffer for base64, hex, binary reads and concatenation', async () => {
    const result = await value(`
      const b = Buffer.from('aGVsbG8gd29ybGQ=', 'base64');
      const joined = Buffer.concat([b, Buffer.from([0, 0, 1, 2])]);
      return { text: b.toString(), hex: Buffer.from('hé').toString('hex'), base64: Buffer.from('hé').toString('base64'),
        uint: joined.readUInt32BE(joined.length - 4),
        isBuffer: Buffer.isBuffer(b), length: joined.length, equals: Buffer.from('a').equals(Buffer.from('a')) };`);
    expect(result).toEqual({
      text: 'hello world',
      hex: Buffer.from('hé').toString('hex'),
      base64: Buffer.from('hé').toString('base64'),
      uint: 258,
      isBuffer: true,
      length: 15,
      equals: true,
    });
  });
});

describe('crypto and structuredClone', () => {
  it('digests with SHA-1, SHA-256, SHA-384 and SHA-512 as node:crypto does', async () => {
    const result = await value(`
      const out = {};
      for (const name of ['SHA-1', 'SHA-256', 'SHA-384', { name: 'SHA-512' }]) {
        const digest = await crypto.subtle.digest(name, new TextEncoder().encode('abc'));
        out[name.name ?? name] = [digest instanceof ArrayBuffer, Buffer.from(digest).toString('hex')];
      }
      let unsupported;
      try { await crypto.subtle.digest('MD5', new Uint8Array(1)); } catch (e) { unsupported = e.name; }
      return { out, unsupported };`);
    const hex = (name: string) => createHash(name).update('abc').digest('hex');
    expect(result).toEqual({
      out: {
        'SHA-1': [true, hex('sha1')],
        'SHA-256': [true, hex('sha256')],
        'SHA-384': [true, hex('sha384')],
        'SHA-512': [true, hex('sha512')],
      },
      unsupported: 'NotSupportedError',
    });
  });

  it('fills random values up to 65,536 bytes, and makes v4 UUIDs', async () => {
    const result = await value(`
      const words = crypto.getRandomValues(new Uint32Array(16384));
      let quota;
      try { crypto.getRandomValues(new Uint8Array(65537)); } catch (e) { quota = [e.name, e instanceof DOMException]; }
      let mismatch;
      try { crypto.getRandomValues(new Float64Array(2)); } catch (e) { mismatch = e.name; }
      const uuids = new Set(Array.from({ length: 20 }, () => crypto.randomUUID()));
      return { filled: words.some((word) => word !== 0), quota, mismatch, uuids: [...uuids] };`);
    expect(result).toMatchObject({
      filled: true,
      quota: ['QuotaExceededError', true],
      mismatch: 'TypeMismatchError',
    });
    const { uuids } = result as { uuids: string[] };
    expect(uuids).toHaveLength(20);
    for (const uuid of uuids) {
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('clones cycles, dates, maps, sets and typed arrays, and refuses functions', async () => {
    const result = await value(`
      const source = { date: new Date(0), map: new Map([[1, { a: 1 }]]), set: new Set(['x']), bytes: new Uint8Array([1, 2]) };
      source.self = source;
      const copy = structuredClone(source);
      let refused;
      try { structuredClone({ f() {} }); } catch (e) { refused = [e.name, e instanceof DOMException]; }
      return [copy !== source, copy.self === copy, copy.date instanceof Date && copy.date.getTime(),
        copy.map.get(1).a, copy.map.get(1) !== source.map.get(1), copy.set.has('x'),
        copy.bytes instanceof Uint8Array && [...copy.bytes], refused];`);
    expect(result).toEqual([true, true, 0, 1, true, true, [1, 2], ['DataCloneError', true]]);
  });
});

describe('fetch classes', () => {
  it('reads Response and Request bodies of each kind, once', async () => {
    const result = await value(`
      const fromBytes = new Response(new Uint8Array([104, 105]), { status: 201, statusText: 'Created', headers: { 'X-A': '1' } });
      const fromBlob = new Response(new Blob(['a', new Uint8Array([98])], { type: 'Text/Plain' }));
      const json = Response.json({ a: 1 });
      const text = await fromBytes.text();
      let reread;
      try { await fromBytes.text(); } catch (e) { reread = e.name; }
      const request = new Request('https://example.com/x?y', { method: 'post', body: JSON.stringify({ b: 2 }), headers: [['Content-Type', 'application/json']] });
      const copy = request.clone();
      let getBody;
      try { new Request('https://example.com', { body: 'x' }); } catch (e) { getBody = e.name; }
      let badStatus;
      try { new Response('x', { status: 99 }); } catch (e) { badStatus = e.name; }
      return {
        bytes: [fromBytes.status, fromBytes.statusText, fromBytes.ok, fromBytes.headers.get('x-a'), text, reread, fromBytes.bodyUsed],
        blob: [await fromBlob.text(), fromBlob.headers.get('content-type')],
        json: [await json.json(), json.headers.get('content-type')],
        buffer: [...new Uint8Array(await new Response('hé').arrayBuffer())],
        asBlob: await (await new Response('abc').blob()).size,
        request: [request.method, request.url, await request.json(), await copy.text(), request.signal.aborted],
        getBody, badStatus, error: [Response.error().status, Response.error().type],
      };`);
    expect(result).toEqual({
      bytes: [201, 'Created', true, '1', 'hi', 'TypeError', true],
      blob: ['ab', 'text/plain'],
      json: [{ a: 1 }, 'application/json'],
      buffer: [104, 0xc3, 0xa9],
      asBlob: 3,
      request: ['POST', 'https://example.com/x?y', { b: 2 }, '{"b":2}', false],
      getBody: 'TypeError',
      badStatus: 'RangeError',
      error: [0, 'error'],
    });
  });

  it('keeps Headers case-insensitive and sorted, and round-trips FormData', async () => {
    const result = await value(`
      const headers = new Headers({ 'B': '2', 'a': '1' });
      headers.append('A', '3');
      headers.append('Set-Cookie', 'x=1');
      headers.append('Set-Cookie', 'y=2');
      let badName;
      try { headers.set('bad name', 'x'); } catch (e) { badName = e.name; }
      const form = new FormData();
      form.append('field', 'value');
      form.append('file', new Blob(['content'], { type: 'text/plain' }), 'a.txt');
      const parsed = await new Response(form).formData();
      const file = parsed.get('file');
      const urlencoded = await new Response(new URLSearchParams({ q: 'x y' })).formData();
      return { entries: [...headers], cookies: headers.getSetCookie(), badName,
        form: [parsed.get('field'), file instanceof File, file.name, file.type, await file.text()], urlencoded: urlencoded.get('q') };`);
    expect(result).toEqual({
      entries: [
        ['a', '1, 3'],
        ['b', '2'],
        ['set-cookie', 'x=1'],
        ['set-cookie', 'y=2'],
      ],
      cookies: ['x=1', 'y=2'],
      badName: 'TypeError',
      form: ['value', true, 'a.txt', 'text/plain', 'content'],
      urlencoded: 'x y',
    });
  });

  it('aborts signals with their reasons, and times them out', async () => {
    const result = await value(`
      const controller = new AbortController();
      const seen = [];
      controller.signal.addEventListener('abort', (event) => seen.push(event.type));
      controller.signal.onabort = () => seen.push('onabort');
      controller.abort();
      const reason = controller.signal.reason;
      const custom = AbortSignal.abort('why');
      const timed = AbortSignal.timeout(10);
      await new Promise((resolve) => timed.addEventListener('abort', resolve));
      let thrown;
      try { timed.throwIfAborted(); } catch (e) { thrown = e.name; }
      let illegal;
      try { new AbortSignal(); } catch (e) { illegal = e.name; }
      return { seen, reason: [reason instanceof DOMException, reason.name, reason.code], custom: custom.reason, thrown, illegal,
        request: new Request('https://x.org', { signal: controller.signal }).signal.aborted };`);
    expect(result).toEqual({
      seen: ['onabort', 'abort'],
      reason: [true, 'AbortError', 20],
      custom: 'why',
      thrown: 'TimeoutError',
      illegal: 'TypeError',
      request: true,
    });
  });
});

describe('Intl, WebSocket and what a bot that uses none of it sees', () => {
  it('formats dates and numbers as Node does', async () => {
    const time = Date.UTC(2024, 0, 15, 13, 5, 9);
    const result = await value(`
      const date = new Date(${time});
      return [
        new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(date),
        new Intl.DateTimeFormat('en-US', { hour: 'numeric', minute: '2-digit', timeZone: 'UTC' }).format(date),
        date.toLocaleString('en-US', { timeZone: 'UTC' }),
        date.toLocaleDateString('de-DE', { timeZone: 'UTC' }),
        date.toLocaleTimeString('en-US', { timeZone: 'UTC' }),
        (1234.5).toLocaleString('en-US'),
        (1234.5).toLocaleString('en-US', { style: 'currency', currency: 'EUR' }),
        new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 }).format(2.25),
        new Intl.DateTimeFormat('en-US', { timeZone: 'UTC' }).resolvedOptions().timeZone,
        new Date(NaN).toLocaleString(),
      ];`);
    const date = new Date(time);
    expect(result).toEqual([
      new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(date),
      new Intl.DateTimeFormat('en-US', {
        hour: 'numeric',
        minute: '2-digit',
        timeZone: 'UTC',
      }).format(date),
      date.toLocaleString('en-US', { timeZone: 'UTC' }),
      date.toLocaleDateString('de-DE', { timeZone: 'UTC' }),
      date.toLocaleTimeString('en-US', { timeZone: 'UTC' }),
      (1234.5).toLocaleString('en-US'),
      (1234.5).toLocaleString('en-US', { style: 'currency', currency: 'EUR' }),
      new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 }).format(2.25),
      'UTC',
      'Invalid Date',
    ]);
    const bad = await run(`new Intl.DateTimeFormat('en-US', { timeZone: 'Nowhere/Never' });`);
    expect(bad).toMatchObject({ status: 'error', message: expect.stringMatching(/time zone/i) });
  });

  it('keeps the locale methods built-in-like, and QuickJS’s own where a bot replaces Intl', async () => {
    const result = await value(`
      const { writable, enumerable, configurable } = Object.getOwnPropertyDescriptor(Date.prototype, 'toLocaleDateString');
      const grouped = (1234.5).toLocaleString('en-US');
      globalThis.Intl = { polyfilled: true };
      return [writable, enumerable, configurable, grouped, typeof new Date(0).toLocaleDateString('en-US'), (1234.5).toLocaleString()];`);
    expect(result).toEqual([true, false, true, '1,234.5', 'string', '1234.5']);
  });

  it('has WebSocket for libraries that look for it, and refuses connections', async () => {
    const result = await run(`
      if (typeof WebSocket !== 'function' || WebSocket.OPEN !== 1) return 'missing';
      new WebSocket('wss://example.com');`);
    expect(result).toMatchObject({
      status: 'error',
      message: expect.stringMatching(/WebSocket connections are not available to bots/),
    });
  });

  it('lets a bot replace a global of a group before or after it is read', async () => {
    const result = await value(`
      globalThis.URL = 'mine';
      const before = URL;
      const encoder = TextEncoder;
      TextEncoder = 1;
      return [before, typeof encoder, TextEncoder, typeof TextDecoder];`);
    expect(result).toEqual(['mine', 'function', 1, 'function']);
  });
});

describe('memory', () => {
  it.each([
    ['a huge Buffer', 'Buffer.alloc(64 * 1024 * 1024)'],
    ['a huge TextEncoder output', "new TextEncoder().encode('x'.repeat(12 * 1024 * 1024))"],
    [
      'huge random arrays',
      'const all = []; for (;;) all.push(crypto.getRandomValues(new Uint8Array(65536)));',
    ],
  ])('stops %s at the memory limit', async (_name, body) => {
    const result = await run(body, { memoryBytes: 16 * MB });
    expect(result.status).toBe('memory');
  });
});

describe('@medplum/core in a bot', () => {
  it('loads a bundle of it and calls its formatting helpers and client', async () => {
    const { code } = await bundleBot('test/fixtures/bots/medplum-core-helpers.ts');
    const result = await pool.run({
      code,
      event: {},
      preludes: WEB_PLATFORM,
      timeoutMs: 10_000,
      memoryBytes: 64 * MB,
      host: noHost,
    });
    expect(result).toMatchObject({
      status: 'ok',
      value: {
        name: 'Dr. Ada Lovelace',
        when: new Date('2024-01-15T13:05:09Z').toLocaleString('en-US', { timeZone: 'UTC' }),
        age: '024Y',
        client: 'function',
      },
    });
  });
});

describe('over HTTP $execute', () => {
  let server: TestServer;
  const execute = async (code: string, timeout = 5) => {
    const created = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', name: 'web', code, timeout },
    });
    const { id } = await created.json();
    return server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body: 'hello',
      headers: { 'Content-Type': 'text/plain' },
    });
  };

  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  afterAll(() => server?.stop());

  it('gives bots timers, URL, crypto and Buffer', async () => {
    const response = await execute(`export async function handler(fhir, event) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const url = new URL('/Patient?name=' + encodeURIComponent(event.input), event.baseUrl);
      const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(event.input));
      return { url: url.searchParams.get('name'), digest: Buffer.from(digest).toString('hex') };
    }`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      url: 'hello',
      digest: createHash('sha256').update('hello').digest('hex'),
    });
  });

  it('answers 408 when a timer outlives the time limit, 400 too-costly past the memory limit', async () => {
    const late = await execute(
      `export async function handler() { await new Promise((r) => setTimeout(r, 60_000)); }`,
      1,
    );
    expect(late.status).toBe(408);
    expect((await late.json()).issue[0]).toMatchObject({ code: 'timeout' });
    const huge = await execute(
      `export async function handler() { const all = []; for (;;) all.push(Buffer.alloc(1024 * 1024)); }`,
    );
    expect(huge.status).toBe(400);
    expect((await huge.json()).issue[0]).toMatchObject({ code: 'too-costly' });
  });
});
