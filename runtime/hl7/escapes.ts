/**
 * HL7 v2 escape sequences, with the escape character the message declares (`\` by default).
 * Medplum leaves them as written; Graphir decodes what a bot reads as a value and encodes what
 * it writes as one, so that `O'Brien\S\ Mary` reads as `O'Brien^ Mary` and a value with a `|`
 * in it cannot break the message.
 *
 * Decoded: `\F\ \S\ \T\ \R\ \E\` (the delimiters), `\P\` (v2.7's truncation character, when
 * MSH-2 declares one) and `\Xhh…\` (bytes, read as UTF-8, else Latin-1). Every other sequence —
 * the formatting ones `\H\ \N\ \.br\ \.sp\ \.in\ \.ti\ \.ce\`, `\Cxxyy\`, `\Mxxyyzz\`, `\Z…\` —
 * is returned as written, escape characters included; an escape character with no closing one
 * is plain text. Encoded: the delimiters, and CR/LF as `\X0D\`/`\X0A\` (a value is literal
 * text: `\.br\` in it is written as `\E\.br\E\`).
 *
 * @see HL7 v2.5.1 chapter 2, 2.7 (use of escape sequences in text fields)
 */
import type { Hl7Context } from './context.js';

/** Decodes the escape sequences of `raw`; each escape character opens one closed by the next. */
export function decodeEscapes(raw: string, context: Hl7Context): string {
  const escape = context.escapeCharacter;
  if (!escape || !raw.includes(escape)) return raw;
  const named = new Map(codesOf(context).map(([ch, code]) => [code, ch]));
  let out = '';
  let from = 0;
  for (let start = raw.indexOf(escape); start >= 0; start = raw.indexOf(escape, from)) {
    const end = raw.indexOf(escape, start + 1);
    if (end < 0) break;
    const body = raw.slice(start + 1, end);
    out += raw.slice(from, start) + (named.get(body) ?? decodeHex(body) ?? escape + body + escape);
    from = end + 1;
  }
  return out + raw.slice(from);
}

/** `value` as ER7 text that decodes back to it: delimiters and line breaks escaped. */
export function encodeEscapes(value: string, context: Hl7Context): string {
  const escape = context.escapeCharacter;
  const codes = new Map([...codesOf(context), ['\r', 'X0D'], ['\n', 'X0A']]);
  let out = '';
  for (const ch of value) {
    const code = codes.get(ch);
    out += code === undefined ? ch : escape + code + escape;
  }
  return out;
}

/** `Xhh…` as UTF-8 (else Latin-1) text; undefined when not hex bytes. */
function decodeHex(body: string): string | undefined {
  if (!/^X(?:[0-9A-Fa-f]{2})+$/.test(body)) return undefined;
  const bytes = body.slice(1).match(/../g) ?? [];
  try {
    return decodeURIComponent(bytes.map((b) => `%${b}`).join(''));
  } catch {
    return bytes.map((b) => String.fromCharCode(parseInt(b, 16))).join('');
  }
}

/** [character, escape code] for each delimiter the context declares. */
function codesOf(context: Hl7Context): [string, string][] {
  const codes: [string, string][] = [
    [context.fieldSeparator, 'F'],
    [context.componentSeparator, 'S'],
    [context.subcomponentSeparator, 'T'],
    [context.repetitionSeparator, 'R'],
    [context.escapeCharacter, 'E'],
    [context.truncationCharacter, 'P'],
  ];
  return codes.filter(([ch]) => ch !== '');
}
