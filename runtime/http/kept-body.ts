/**
 * Bodies that stay the same while the process runs, some of them tens of megabytes (the SDL,
 * introspection answers, the playground's page and scripts), are sent from memory: each with a
 * strong ETag made from a hash of its content, answered 304 when `If-None-Match` names it, and
 * compressed once per content coding on first demand. The hash and the compression run on
 * libuv's thread pool, so the event loop goes on serving other requests meanwhile.
 *
 * A body is known by its Buffer object: callers keep the same Buffer for as long as its content
 * is served, and what was derived from it goes when it does.
 */
import { webcrypto } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Context } from 'koa';

type Coding = 'br' | 'gzip';

interface Derived {
  /** Base64url SHA-256 of the uncompressed content. */
  readonly hash: Promise<string>;
  readonly encoded: Map<Coding, Promise<Buffer>>;
}

const derived = new WeakMap<Buffer, Derived>();

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * Compressed once and kept, so a slower, smaller setting than per-response compression's pays;
 * brotli's gains flatten past quality 6 while its time keeps growing (docs/http.md).
 */
const ENCODE: Record<Coding, (bytes: Buffer) => Promise<Buffer>> = {
  br: (bytes) =>
    brotli(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 6,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  gzip: (bytes) => gzipped(bytes),
};

/**
 * Answers 200 with `bytes` (the caller has set the type), compressed as the client accepts, or
 * 304 to a GET or HEAD whose `If-None-Match` names this representation; other methods ignore
 * `If-None-Match` (the tag describes the answer to a query, not a resource a POST would change).
 * Each coding has its own strong tag (`"<hash>"`, `"<hash>-br"`, `"<hash>-gzip"`): they are
 * different byte sequences.
 */
export async function sendKeptBody(ctx: Context, bytes: Buffer): Promise<void> {
  const coding = (['br', 'gzip'] as const).find((c) => ctx.acceptsEncodings(c) === c);
  const kept = derivedFrom(bytes);
  // Started before the hash is awaited: the first request waits for the longer of the two only.
  const encoded = coding && { coding, bytes: encodedAs(kept, bytes, coding) };
  const hash = await kept.hash;
  const tag = coding ? `"${hash}-${coding}"` : `"${hash}"`;
  ctx.vary('Accept-Encoding');
  ctx.set('ETag', tag);
  if ((ctx.method === 'GET' || ctx.method === 'HEAD') && names(ctx.get('If-None-Match'), tag)) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  if (!encoded) {
    ctx.body = bytes;
    return;
  }
  ctx.body = await encoded.bytes;
  ctx.set('Content-Encoding', encoded.coding);
}

function encodedAs(kept: Derived, bytes: Buffer, coding: Coding): Promise<Buffer> {
  let encoded = kept.encoded.get(coding);
  if (!encoded) {
    kept.encoded.set(coding, (encoded = ENCODE[coding](bytes)));
    // Forgotten if it fails, to be tried again by the next request that wants it.
    encoded.catch(() => kept.encoded.delete(coding));
  }
  return encoded;
}

/**
 * Whether an `If-None-Match` value names `tag`, by weak comparison (`W/` ignored), or is `*`.
 * Not Koa's `ctx.fresh`: it answers in full whenever the request says `Cache-Control: no-cache`,
 * which fetch() adds to every request that sets `If-None-Match` itself.
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.1.2
 */
function names(ifNoneMatch: string, tag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((listed) => listed.trim().replace(/^W\//, '') === tag);
}

function derivedFrom(bytes: Buffer): Derived {
  let found = derived.get(bytes);
  if (!found) {
    const hash = webcrypto.subtle
      .digest('SHA-256', bytes)
      .then((digest) => Buffer.from(digest).toString('base64url'));
    derived.set(bytes, (found = { hash, encoded: new Map() }));
  }
  return found;
}

/**
 * A file whose name carries its version or a hash of its content (the web app's and the
 * playground's scripts and styles): kept by browsers and caches for a year without asking again;
 * `undefined` when no such file is served, answered 404 with `missing`.
 */
export function sendVersionedFile(
  ctx: Context,
  file: { readonly type: string; readonly content: Buffer } | undefined,
  missing: string,
): Promise<void> | void {
  if (!file) {
    ctx.status = 404;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = missing;
    return;
  }
  ctx.type = file.type;
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  return sendKeptBody(ctx, file.content);
}
