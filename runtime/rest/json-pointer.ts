/**
 * JSON Pointer syntax (RFC 6901) checked in one pass over a bounded string: a pointer comes from
 * a PATCH body and is checked before the resource is read, on the thread every tenant shares.
 * @see https://www.rfc-editor.org/rfc/rfc6901#section-3
 */

/** Characters in one pointer: far past any FHIR element path, short enough to check at once. */
export const MAX_JSON_POINTER_LENGTH = 1_024;

/** `""`, or `/` tokens in which every `~` is followed by `0` or `1`; at most the length limit. */
export function isJsonPointer(text: string): boolean {
  if (text.length > MAX_JSON_POINTER_LENGTH) return false;
  if (text !== '' && !text.startsWith('/')) return false;
  for (let at = text.indexOf('~'); at >= 0; at = text.indexOf('~', at + 1)) {
    const escaped = text[at + 1];
    if (escaped !== '0' && escaped !== '1') return false;
  }
  return true;
}
