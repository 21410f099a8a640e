/**
 * `Subscription.channel.header` lines (`Name: value`) read and checked in linear time, with their
 * number and length bounded before anything looks inside them: a header is written by anyone who
 * may write a Subscription, and each one parsed runs on the thread every tenant shares.
 * @see http://hl7.org/fhir/R4/subscription-definitions.html#Subscription.channel.header
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.1
 */
import { fhirError } from '../model/fhir-error.js';

/** Headers one Subscription may send; a delivery's headers must fit an endpoint's header limit. */
export const MAX_CHANNEL_HEADERS = 32;
/** Characters in one `Name: value` line (enough for a bearer JWT; 8 kB is a common total limit). */
export const MAX_CHANNEL_HEADER_LENGTH = 4_096;

/** An HTTP field name (RFC 9110 token): one character class, so one linear scan. */
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Fields the HTTP client sets itself, which a header could only break. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

export type ChannelHeader = readonly [name: string, value: string];

/** Each header as its name and trimmed value; 400 naming `Subscription.channel.header` otherwise. */
export function parseChannelHeaders(value: unknown): readonly ChannelHeader[] {
  const lines = value ?? [];
  if (!Array.isArray(lines)) throw invalid('is a list of "Name: value" strings');
  if (lines.length > MAX_CHANNEL_HEADERS)
    throw invalid(`has ${lines.length} headers; at most ${MAX_CHANNEL_HEADERS} are allowed`);
  return lines.map(parseChannelHeader);
}

function parseChannelHeader(line: unknown): ChannelHeader {
  if (typeof line !== 'string') throw invalid(`${describe(line)} is not a "Name: value" string`);
  if (line.length > MAX_CHANNEL_HEADER_LENGTH)
    throw invalid(
      `a header of ${line.length} characters is longer than ${MAX_CHANNEL_HEADER_LENGTH}`,
    );
  const colon = line.indexOf(':');
  const name = line.slice(0, colon);
  const value = trimBlanks(line.slice(colon + 1));
  if (colon < 0 || !FIELD_NAME.test(name) || /[\r\n]/.test(value))
    throw invalid(`${describe(line)} is not "Name: value" (a field name, a value on one line)`);
  if (RESERVED_HEADERS.has(name.toLowerCase()))
    throw invalid(`${name} is set by the server, not by a Subscription`);
  return [name, value];
}

/** The value without the spaces and tabs around it (RFC 9110's optional whitespace, OWS). */
function trimBlanks(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isBlank(text[start])) start += 1;
  while (end > start && isBlank(text[end - 1])) end -= 1;
  return text.slice(start, end);
}

function isBlank(character: string): boolean {
  return character === ' ' || character === '\t';
}

/** At most 100 characters of a refused header, so an answer never echoes a huge input back. */
function describe(line: unknown): string {
  const text = JSON.stringify(line) ?? String(line);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

function invalid(message: string) {
  return fhirError(
    400,
    'invalid',
    `Subscription.channel.header: ${message}`,
    'Subscription.channel.header',
  );
}
