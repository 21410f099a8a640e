/**
 * `Bot/$execute`, by id or by identifier, with MedplumClient's arguments
 * `(idOrIdentifier, data, contentType?, options?)`; the third may also be Graphir's
 * `{ contentType, method }`. Unlike Medplum, which sends every object as FHIR JSON, the input's
 * Content-Type is inferred when not given, and an HL7 v2 answer is read as an `Hl7Message`.
 */
import type { Identifier, Resource } from '../../generated/types/index.js';
import { Hl7Message } from '../hl7/index.js';
import { errorOf } from './graphir-error.js';
import type { Call, FhirTransport, RequestOptions } from './fhir-transport.js';
import { FHIR_JSON, isJsonType, mediaType } from './response-body.js';
import { toSearchParams, type SearchQuery } from './search-query.js';

export const HL7_CONTENT_TYPE = 'x-application/hl7-v2+er7';
const FORM = 'application/x-www-form-urlencoded';

export interface ExecuteBotOptions {
  /** The request's Content-Type; inferred from the input when absent. */
  contentType?: string;
  /** POST (default) sends the input as the body; GET sends it as query parameters. */
  method?: 'GET' | 'POST';
}

/** A Bot's identifier; both parts are needed to find it. */
export type BotIdentifier = Pick<Identifier, 'system' | 'value'>;

export async function executeBot(
  transport: FhirTransport,
  idOrIdentifier: string | BotIdentifier,
  input: unknown,
  contentTypeOrOptions: string | ExecuteBotOptions | undefined,
  options: RequestOptions | undefined,
): Promise<unknown> {
  const { contentType, method = 'POST' } =
    typeof contentTypeOrOptions === 'string'
      ? { contentType: contentTypeOrOptions }
      : (contentTypeOrOptions ?? {});
  const url = new URL(`${transport.fhirBaseUrl}/${botPath(idOrIdentifier)}`);
  if (typeof idOrIdentifier !== 'string')
    url.searchParams.set('identifier', `${idOrIdentifier.system}|${idOrIdentifier.value}`);
  const call: Call = { method };
  if (method === 'GET') {
    if (input !== undefined && input !== null)
      for (const [name, value] of toSearchParams(input as SearchQuery))
        url.searchParams.append(name, value);
  } else if (input !== undefined) {
    call.headers = { 'Content-Type': contentType ?? contentTypeOf(input) };
    call.body = bodyOf(input);
  } else if (contentType !== undefined) {
    call.headers = { 'Content-Type': contentType };
  }
  const response = await transport.send(url.toString(), call, options);
  if (!response.ok) throw await errorOf(response);
  return readByContentType(response);
}

function botPath(idOrIdentifier: string | BotIdentifier): string {
  if (typeof idOrIdentifier === 'string') {
    if (idOrIdentifier === '') throw new TypeError('executeBot needs a bot id or identifier');
    return `Bot/${encodeURIComponent(idOrIdentifier)}/$execute`;
  }
  if (!idOrIdentifier?.system || !idOrIdentifier.value)
    throw new TypeError('A bot identifier needs a system and a value');
  return 'Bot/$execute';
}

function isResource(value: unknown): value is Resource {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { resourceType?: unknown }).resourceType === 'string'
  );
}

function contentTypeOf(input: unknown): string {
  if (typeof input === 'string') return 'text/plain';
  if (input instanceof Hl7Message) return HL7_CONTENT_TYPE;
  if (input instanceof URLSearchParams) return FORM;
  if (isResource(input)) return FHIR_JSON;
  return 'application/json';
}

function bodyOf(input: unknown): string {
  if (typeof input === 'string') return input;
  if (input instanceof Hl7Message || input instanceof URLSearchParams) return input.toString();
  return JSON.stringify(input);
}

/** JSON → the value, HL7 v2 → an Hl7Message, anything else → the text. */
async function readByContentType(response: Response): Promise<unknown> {
  const type = mediaType(response);
  const text = await response.text();
  if (isJsonType(type)) return text === '' ? undefined : JSON.parse(text);
  if (type === HL7_CONTENT_TYPE) return Hl7Message.parse(text);
  return text;
}
