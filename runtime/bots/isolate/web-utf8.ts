/**
 * UTF-8 as the Encoding Standard defines it, for the isolate's TextEncoder/TextDecoder and the
 * bodies of Blob, Request and Response: QuickJS has no encoder of its own, and each lazy group
 * that needs one bundles this module (a few hundred bytes) rather than reaching for another
 * group's global, which a bot may have replaced.
 */

/** `text` as UTF-8; a lone surrogate becomes U+FFFD (EF BF BD), as TextEncoder does. */
export function encodeUtf8(text: string): Uint8Array {
  const length = text.length;
  const bytes = new Uint8Array(length * 3);
  let at = 0;
  for (let index = 0; index < length; index++) {
    let code = text.charCodeAt(index);
    if (code < 0x80) {
      bytes[at++] = code;
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = index + 1 < length ? text.charCodeAt(index + 1) : 0;
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        index++;
      } else {
        code = 0xfffd;
      }
    }
    if (code < 0x800) {
      bytes[at++] = 0xc0 | (code >> 6);
    } else if (code < 0x10000) {
      bytes[at++] = 0xe0 | (code >> 12);
      bytes[at++] = 0x80 | ((code >> 6) & 0x3f);
    } else {
      bytes[at++] = 0xf0 | (code >> 18);
      bytes[at++] = 0x80 | ((code >> 12) & 0x3f);
      bytes[at++] = 0x80 | ((code >> 6) & 0x3f);
    }
    bytes[at++] = 0x80 | (code & 0x3f);
  }
  return bytes.slice(0, at);
}

/** Thrown by `decodeUtf8` in fatal mode, as TextDecoder's TypeError. */
export class InvalidUtf8Error extends TypeError {
  constructor() {
    super('The encoded data was not valid UTF-8');
  }
}

/**
 * How many bytes at the end of `bytes` begin a sequence that more bytes could complete: a
 * streaming decoder keeps them for the next chunk.
 */
export function incompleteTail(bytes: Uint8Array): number {
  const end = bytes.length;
  for (let back = 1; back <= 3 && back <= end; back++) {
    const byte = bytes[end - back];
    if ((byte & 0xc0) !== 0x80) {
      const needed = byte >= 0xf0 && byte <= 0xf4 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc2 ? 2 : 1;
      return needed > back ? back : 0;
    }
  }
  return 0;
}

/**
 * `bytes` as text; each maximal invalid subsequence becomes U+FFFD (or, when `fatal`, an
 * InvalidUtf8Error), as TextDecoder does.
 */
export function decodeUtf8(bytes: Uint8Array, fatal = false): string {
  const parts: string[] = [];
  const units: number[] = [];
  const length = bytes.length;
  let index = 0;
  while (index < length) {
    const first = bytes[index++];
    let code = first;
    if (first >= 0x80) {
      let needed = 0;
      let lower = 0x80;
      let upper = 0xbf;
      if (first >= 0xc2 && first <= 0xdf) {
        needed = 1;
        code = first & 0x1f;
      } else if (first >= 0xe0 && first <= 0xef) {
        needed = 2;
        code = first & 0x0f;
        if (first === 0xe0) lower = 0xa0;
        if (first === 0xed) upper = 0x9f;
      } else if (first >= 0xf0 && first <= 0xf4) {
        needed = 3;
        code = first & 0x07;
        if (first === 0xf0) lower = 0x90;
        if (first === 0xf4) upper = 0x8f;
      }
      let valid = needed > 0;
      for (let seen = 0; valid && seen < needed; seen++) {
        const byte = index < length ? bytes[index] : -1;
        if (byte < lower || byte > upper) {
          valid = false;
          break;
        }
        lower = 0x80;
        upper = 0xbf;
        code = (code << 6) | (byte & 0x3f);
        index++;
      }
      if (!valid) {
        if (fatal) throw new InvalidUtf8Error();
        code = 0xfffd;
      }
    }
    if (code >= 0x10000) {
      code -= 0x10000;
      units.push(0xd800 + (code >> 10), 0xdc00 + (code & 0x3ff));
    } else {
      units.push(code);
    }
    // fromCharCode takes its arguments on the stack: a bounded number at a time.
    if (units.length >= 8192) {
      parts.push(String.fromCharCode(...units));
      units.length = 0;
    }
  }
  parts.push(String.fromCharCode(...units));
  return parts.join('');
}
