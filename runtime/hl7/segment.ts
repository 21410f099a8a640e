/**
 * One segment of a message, as Medplum's `Hl7Segment`: its name, then its fields.
 *
 * Field numbers follow HL7, as Medplum's `getField`: field 0 is the name; on a header segment
 * (MSH, and the batch and file headers BHS and FHS, which Medplum does not treat so), field 1 is
 * the field separator and field 2 the encoding characters, so `getField(9)` is MSH-9. The
 * deprecated `get(n)` counts as written instead: on MSH, `get(8)` is MSH-9.
 *
 * Fields are kept as written and parsed on first read, so reading PID-5 of a long segment costs
 * the parsing of PID-5 only.
 */
import { Hl7Context } from './context.js';
import { Hl7Field } from './field.js';

/** The segments whose first field is the field separator itself. */
const HEADERS = ['MSH', 'BHS', 'FHS'];

export class Hl7Segment {
  readonly context: Hl7Context;
  readonly name: string;
  /**
   * The fields as written, each ER7 text until first read, then an Hl7Field: [0] is the name;
   * on a header, [1] is MSH-2 (the field separator is not written as a field).
   */
  private readonly written: (Hl7Field | string)[];

  /** A segment from its fields: the first is the name (on MSH, the second is MSH-2). */
  constructor(fields: (Hl7Field | string)[], context = new Hl7Context()) {
    if (!Array.isArray(fields)) throw new Error('An HL7 segment is made of an array of fields');
    this.context = context;
    this.written = fields;
    const first = fields[0];
    this.name = typeof first === 'string' ? first : (first?.components[0]?.[0] ?? '');
  }

  /** Every field as written (parsing those not yet read); on MSH, [1] is MSH-2. */
  get fields(): Hl7Field[] {
    for (let i = 0; i < this.written.length; i++) this.parsed(i);
    return this.written as Hl7Field[];
  }

  /**
   * The field at `index` as written, counting the name as 0 (on MSH, `get(1)` is MSH-2).
   * @deprecated As Medplum's: use getField(), which numbers MSH's fields as HL7 does.
   */
  get(index: number): Hl7Field {
    return this.parsed(index) as Hl7Field;
  }

  /**
   * Field `index` as HL7 numbers it (PID-5 is `getField(5)`; 0 is the name). Undefined at run
   * time when the segment has no such field, as Medplum's (whose type says Hl7Field): read it
   * with `?.`.
   */
  getField(index: number): Hl7Field {
    if (this.isHeader()) {
      if (index === 1) return new Hl7Field([[this.context.getMsh1()]], this.context);
      if (index === 2) return new Hl7Field([[this.context.getMsh2()]], this.context);
      if (index > 2) return this.parsed(index - 1) as Hl7Field;
    }
    return this.parsed(index) as Hl7Field;
  }

  /** `getField(fieldIndex).getComponent(component, subcomponent, repetition)`; '' when absent. */
  getComponent(
    fieldIndex: number,
    component: number,
    subcomponent?: number,
    repetition = 0,
  ): string {
    return this.getField(fieldIndex)?.getComponent(component, subcomponent, repetition) ?? '';
  }

  /** The segment as ER7 text, without a segment terminator. */
  toString(): string {
    return this.written.map(String).join(this.context.fieldSeparator);
  }

  /** A segment from its ER7 text. */
  static parse(text: string, context = new Hl7Context()): Hl7Segment {
    return new Hl7Segment(String(text).split(context.fieldSeparator), context);
  }

  /**
   * Sets field `index` (HL7 numbering, from 1) to an Hl7Field, or to ER7 text — parsed, not
   * escaped: `setField(9, 'ACK^A01')` sets two components, as Medplum's. Missing fields are
   * added. False for MSH-1 and MSH-2 (the separators) and an index that is not a whole number
   * from 1 (Medplum would write field 0, the name, or a property of the array).
   */
  setField(index: number, field: Hl7Field | string): boolean {
    if (!Number.isInteger(index) || index < 1) return false;
    let at = index;
    if (this.isHeader()) {
      if (index <= 2) return false;
      at = index - 1;
    }
    while (this.written.length <= at) this.written.push('');
    this.written[at] = typeof field === 'string' ? Hl7Field.parse(field, this.context) : field;
    return true;
  }

  /**
   * `getField(fieldIndex).setComponent(component, value, subcomponent, repetition)`: the value
   * is encoded (Hl7Field.setComponent). False when the segment has no such field (as Medplum's:
   * use setField to add one) or it is MSH-1 or MSH-2.
   */
  setComponent(
    fieldIndex: number,
    component: number,
    value: string,
    subcomponent?: number,
    repetition = 0,
  ): boolean {
    if (this.isHeader() && (fieldIndex === 1 || fieldIndex === 2)) return false;
    const field = this.getField(fieldIndex);
    return field ? field.setComponent(component, value, subcomponent, repetition) : false;
  }

  /** The field at position `at` as written, parsed now if not yet; undefined when absent. */
  private parsed(at: number): Hl7Field | undefined {
    if (!Number.isInteger(at) || at < 0) return undefined;
    const written = this.written[at];
    if (typeof written !== 'string') return written;
    // MSH-2 holds the separators: one value, not split on them.
    const field =
      at === 1 && this.isHeader()
        ? new Hl7Field([[written]], this.context)
        : Hl7Field.parse(written, this.context);
    this.written[at] = field;
    return field;
  }

  private isHeader(): boolean {
    return HEADERS.includes(this.name);
  }
}
