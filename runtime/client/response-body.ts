/** Reading response bodies: JSON that may be empty or malformed, and media types. */

export const FHIR_JSON = 'application/fhir+json';

/** The parsed JSON body; `undefined` when the body is empty or not JSON. */
export async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  return text === '' ? undefined : parseJson(text);
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The Content-Type without parameters, lower case. */
export function mediaType(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}
