/**
 * The lazy group of the fetch classes and what they refer to: one evaluation, so that
 * `instanceof` holds between them (a Request's signal is this group's AbortSignal, a body
 * read as a Blob is this group's Blob).
 */
export { DOMException, Event, EventTarget, AbortController, AbortSignal } from './web-events.js';
export { Blob, File, FormData } from './web-blob.js';
export { Headers, Request, Response } from './web-fetch-classes.js';
// `fetch` needs the isolate host: web-platform.ts adds what `withHost` makes.
export { withHost } from './fetch.js';
