/**
 * The lazy group of the fetch classes, what they refer to and `fetch` itself: one evaluation,
 * so that `instanceof` holds between them (a Request's signal is this group's AbortSignal, a
 * body read as a Blob is this group's Blob, what fetch returns is this group's Response).
 */
import { DOMException, Event, EventTarget, AbortController, AbortSignal } from './web-events.js';
import { Blob, File, FormData } from './web-blob.js';
import { Headers, Request, Response } from './web-fetch-classes.js';
import { createFetch } from './fetch.js';
import type { IsolateHost } from './isolate-host.js';

/** The group's values (web-platform.ts); `fetch` sends its requests through the host. */
export function fetchGlobals(host: IsolateHost) {
  return {
    DOMException,
    Event,
    EventTarget,
    AbortController,
    AbortSignal,
    Blob,
    File,
    FormData,
    Headers,
    Request,
    Response,
    fetch: createFetch(host),
  };
}
