/**
 * Response compression: br or gzip, as the client accepts (br preferred when both are), for
 * bodies of at least 1 KiB whose type compresses (JSON, FHIR JSON, GraphQL answers, text, HTML,
 * scripts). Bodies already encoded (the SDL, introspection answers and playground assets, which
 * kept-body.ts compresses once and keeps) and answers to HEAD are left alone.
 */
import compress from 'koa-compress';
import type { Middleware } from 'koa';

/** Smaller answers would save a few hundred bytes at most, for the cost of a compression stream. */
const THRESHOLD_BYTES = 1024;

export function compression(): Middleware {
  // koa-compress's brotli quality (4) compresses FHIR JSON about as fast as gzip's default level,
  // and smaller. deflate (ambiguous framing between clients) and zstd are not offered.
  const compressor = compress({
    threshold: THRESHOLD_BYTES,
    deflate: false,
    zstd: false,
  });
  return (ctx, next) =>
    compressor(ctx, async () => {
      await next();
      // koa-compress serialises a JSON body to measure it and again to compress it; once is
      // enough, and Koa would serialise it anyway.
      const { body } = ctx;
      if (
        body !== null &&
        typeof body === 'object' &&
        !Buffer.isBuffer(body) &&
        typeof (body as { pipe?: unknown }).pipe !== 'function'
      ) {
        ctx.body = JSON.stringify(body);
      }
    });
}
