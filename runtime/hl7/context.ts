/**
 * The separators a message declares in MSH-1 and MSH-2, as Medplum's `Hl7Context`: the same
 * constructor, defaults and `getMsh1`/`getMsh2`. Graphir adds a 7th, v2.7's truncation character
 * (MSH-2's optional 5th), so that `\P\` decodes and MSH-2 is written back whole.
 *
 * @see HL7 v2.5.1 chapter 2, 2.5.4 (message delimiters); v2.7 2.5.5.5 (truncation character)
 */
export class Hl7Context {
  readonly segmentSeparator: string;
  readonly fieldSeparator: string;
  readonly componentSeparator: string;
  readonly repetitionSeparator: string;
  readonly escapeCharacter: string;
  readonly subcomponentSeparator: string;
  /** '' when the message declares none. */
  readonly truncationCharacter: string;

  constructor(
    segmentSeparator = '\r',
    fieldSeparator = '|',
    componentSeparator = '^',
    repetitionSeparator = '~',
    escapeCharacter = '\\',
    subcomponentSeparator = '&',
    truncationCharacter = '',
  ) {
    this.segmentSeparator = segmentSeparator;
    this.fieldSeparator = fieldSeparator;
    this.componentSeparator = componentSeparator;
    this.repetitionSeparator = repetitionSeparator;
    this.escapeCharacter = escapeCharacter;
    this.subcomponentSeparator = subcomponentSeparator;
    this.truncationCharacter = truncationCharacter;
  }

  /** MSH-1: the field separator. */
  getMsh1(): string {
    return this.fieldSeparator;
  }

  /** MSH-2: the encoding characters (with the truncation character, when declared). */
  getMsh2(): string {
    return (
      this.componentSeparator +
      this.repetitionSeparator +
      this.escapeCharacter +
      this.subcomponentSeparator +
      this.truncationCharacter
    );
  }
}

/**
 * The context an MSH segment's text declares: a field separator, then 4 encoding characters (5
 * with v2.7's truncation character), all distinct and none a letter, digit or space. Medplum
 * takes characters 4 to 8 whatever they are; a message they cannot be the separators of is
 * refused here, with the reason.
 */
export function contextOfHeader(msh: string): Hl7Context {
  if (msh.length < 8) {
    throw new Error(
      'The MSH segment is too short: it needs MSH, a field separator and 4 encoding characters',
    );
  }
  const field = msh[3];
  const end = msh.indexOf(field, 4);
  const chars = msh.slice(4, end < 0 ? undefined : end);
  if (chars.length < 4 || chars.length > 5) {
    throw new Error(
      `MSH-2 must hold 4 encoding characters (5 with truncation), not ${JSON.stringify(chars)}`,
    );
  }
  const all = field + chars;
  for (const ch of all) {
    if (/[\p{L}\p{N}\s]/u.test(ch) || all.indexOf(ch) !== all.lastIndexOf(ch)) {
      throw new Error(
        `The MSH separators ${JSON.stringify(all)} must be distinct and not letters, digits or spaces`,
      );
    }
  }
  const [component, repetition, escape, subcomponent, truncation = ''] = chars;
  return new Hl7Context('\r', field, component, repetition, escape, subcomponent, truncation);
}
