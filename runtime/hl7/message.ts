/**
 * An HL7 v2 message in ER7 ("pipe and hat") encoding, as Medplum's `Hl7Message`: the same
 * methods, numbering and defaults (`getSegment`, `getAllSegments`, `header`, `buildAck`,
 * `getAckType`, `setSegment`, `toString`, `Hl7Message.parse`, and the deprecated `get` and
 * `getAll`), so that bots written for Medplum run unchanged. Where Graphir differs:
 *
 * - values read through `getComponent` are decoded and values written through `setComponent`
 *   encoded (escapes.ts); Medplum leaves escape sequences as they are;
 * - `parse` reads `\r`, `\n` or `\r\n` segment ends, ignores blank lines, a leading BOM and MLLP
 *   framing, and refuses separators that cannot be (Medplum only checks for `MSH`);
 * - `toString()` is always the segments joined by `\r` with no terminator after the last, where
 *   Medplum gives back a parsed message's text as it came until it is changed;
 * - `buildAck` keeps the original's processing id (MSH-11) where Medplum always writes `P`,
 *   uses the message's own separators in MSH-9, and takes an optional MSA-3 `text`.
 *
 * @see HL7 v2.5.1 chapter 2, 2.5 (message construction rules) and 2.9 (acknowledgments)
 */
import { contextOfHeader, Hl7Context } from './context.js';
import { encodeEscapes } from './escapes.js';
import { Hl7Segment } from './segment.js';

/** MSA-1: original mode (A…) and enhanced mode commit (C…) acknowledgment codes. */
export const AckCode = {
  AA: 'AA',
  AE: 'AE',
  AR: 'AR',
  CA: 'CA',
  CE: 'CE',
  CR: 'CR',
} as const;
export type AckCode = keyof typeof AckCode;

export interface Hl7AckOptions {
  /** MSA-1; AA when absent. */
  ackCode?: AckCode;
  /** An ERR segment to append. */
  errSegment?: Hl7Segment;
  /** Graphir's: MSA-3's text (encoded) instead of the code's own ("OK" for AA…). */
  text?: string;
}

/** MSA-3 by code, as Medplum writes it. */
const ACK_TEXT: Record<AckCode, string> = {
  AA: 'OK',
  AE: 'Application Error',
  AR: 'Application Reject',
  CA: 'Commit Accept',
  CE: 'Commit Error',
  CR: 'Commit Reject',
};

/** The last control id an ACK got here: the next is a later one even within the millisecond. */
let lastControlId = 0;

export class Hl7Message {
  readonly context: Hl7Context;
  /** Each segment as ER7 text until first read, then an Hl7Segment. */
  private readonly written: (Hl7Segment | string)[];

  /** A message from its segments, each an Hl7Segment or its ER7 text (parsed on first read). */
  constructor(segments: (Hl7Segment | string)[], context = new Hl7Context()) {
    if (!Array.isArray(segments)) throw new Error('An HL7 message is made of an array of segments');
    this.context = context;
    this.written = segments;
  }

  /** Every segment (parsing those not yet read). */
  get segments(): Hl7Segment[] {
    for (let i = 0; i < this.written.length; i++) this.parsed(i);
    return this.written as Hl7Segment[];
  }

  /** The first segment (MSH in a parsed message). */
  get header(): Hl7Segment {
    const header = this.parsed(0);
    if (!header) throw new Error("Can't get header before first segment added");
    return header;
  }

  /** @deprecated As Medplum's: use getSegment(). */
  get(index: number | string): Hl7Segment | undefined {
    return this.getSegment(index);
  }

  /** @deprecated As Medplum's: use getAllSegments(). */
  getAll(name: string): Hl7Segment[] {
    return this.getAllSegments(name);
  }

  /** The segment at that index (0 is MSH), or the first with that name. */
  getSegment(index: number | string): Hl7Segment | undefined {
    if (typeof index === 'number') return this.parsed(index);
    const at = this.indexesOf(index)[0];
    return at === undefined ? undefined : this.parsed(at);
  }

  /** Every segment with that name, in order. */
  getAllSegments(name: string): Hl7Segment[] {
    return this.indexesOf(name).map((at) => this.parsed(at) as Hl7Segment);
  }

  /** The message as ER7: segments joined by `\r`. */
  toString(): string {
    return this.written.map(String).join(this.context.segmentSeparator);
  }

  /** MSA-1 upper-cased, if it is an acknowledgment code (on an ACK: how it went). */
  getAckType(): AckCode | undefined {
    const code = this.getSegment('MSA')?.getField(1)?.toString().toUpperCase();
    return code !== undefined && Object.prototype.hasOwnProperty.call(AckCode, code)
      ? (code as AckCode)
      : undefined;
  }

  /**
   * An acknowledgment, with this message's separators: MSH with sender and receiver swapped
   * (MSH-3/4 ↔ MSH-5/6), a UTC timestamp, `ACK^<trigger>^ACK` (as many components as the
   * original's MSH-9), a new control id, the same processing id and version (2.5.1 when none);
   * then MSA with the code (AA by default), the original's control id and the code's text; then
   * the ERR segment, if given.
   */
  buildAck(options?: Hl7AckOptions): Hl7Message {
    const ackCode = options?.ackCode ?? 'AA';
    if (!Object.prototype.hasOwnProperty.call(AckCode, ackCode)) {
      throw new Error(
        `ackCode must be one of ${Object.keys(AckCode).join(', ')}, not ${JSON.stringify(ackCode)}`,
      );
    }
    const now = new Date();
    const msh = this.getSegment('MSH');
    const field = (n: number): string => msh?.getField(n)?.toString() ?? '';
    const controlId = (lastControlId = Math.max(now.getTime(), lastControlId + 1));
    const text = options?.text;
    const header = new Hl7Segment(
      [
        'MSH',
        this.context.getMsh2(),
        field(5),
        field(6),
        field(3),
        field(4),
        hl7DateTime(now),
        '',
        this.ackMessageType(msh),
        String(controlId),
        field(11) || 'P',
        msh?.getField(12)?.toString() ?? '2.5.1',
      ],
      this.context,
    );
    const msa = new Hl7Segment(
      [
        'MSA',
        ackCode,
        field(10),
        text === undefined ? ACK_TEXT[ackCode] : encodeEscapes(String(text), this.context),
      ],
      this.context,
    );
    const segments = [header, msa];
    if (options?.errSegment) segments.push(options.errSegment);
    return new Hl7Message(segments, this.context);
  }

  /**
   * Reads an ER7 message. Segments end with `\r`, `\n` or `\r\n`; blank lines, a leading BOM and
   * MLLP framing (VT before, FS after) are ignored. The separators come from MSH-1 and MSH-2.
   */
  static parse(text: string): Hl7Message {
    if (typeof text !== 'string') throw new Error('An HL7 v2 message must be text');
    const lines = text
      .replace(/^[\uFEFF\v]+/, '')
      .split(/\r\n|\r|\n/)
      .filter((line) => !/^[\s\x1c]*$/.test(line));
    const first = lines[0] ?? '';
    if (!first.startsWith('MSH')) {
      throw new Error(
        `An HL7 v2 message must start with an MSH segment, not ${JSON.stringify(first.slice(0, 16))}`,
      );
    }
    return new Hl7Message(lines, contextOfHeader(first));
  }

  /**
   * Puts `segment` at an index (past the end: appended) or in place of the first segment with a
   * name. False, and nothing changed, when that would put MSH anywhere but first or anything
   * else first, or no segment has that name.
   */
  setSegment(index: number | string, segment: Hl7Segment): boolean {
    const at = typeof index === 'number' ? index : this.indexesOf(index)[0];
    if (at === undefined || !Number.isInteger(at) || at < 0) return false;
    if ((at === 0) !== (segment.name === 'MSH')) return false;
    this.written[Math.min(at, this.written.length)] = segment;
    return true;
  }

  /** The MSH-9 of an ACK: `ACK`, then the original's trigger event and structure if it has them. */
  private ackMessageType(msh: Hl7Segment | undefined): string {
    const type = msh?.getField(9);
    const trigger = type?.getComponent(2);
    const structure = type?.getComponent(3);
    if (!trigger) return 'ACK';
    const separator = this.context.componentSeparator;
    return structure ? ['ACK', trigger, 'ACK'].join(separator) : `ACK${separator}${trigger}`;
  }

  /** The segment at `at`, parsed now if not yet; undefined when absent. */
  private parsed(at: number): Hl7Segment | undefined {
    if (!Number.isInteger(at) || at < 0) return undefined;
    const written = this.written[at];
    if (typeof written !== 'string') return written;
    const segment = Hl7Segment.parse(written, this.context);
    this.written[at] = segment;
    return segment;
  }

  /** Where the segments with that name are, without parsing the others. */
  private indexesOf(name: string): number[] {
    const separator = this.context.fieldSeparator;
    const indexes: number[] = [];
    this.written.forEach((segment, at) => {
      const found =
        typeof segment === 'string'
          ? segment === name || segment.startsWith(name + separator)
          : segment.name === name;
      if (found) indexes.push(at);
    });
    return indexes;
  }
}

/** YYYYMMDDHHMMSS in UTC, with `.SSS` when there are milliseconds (as Medplum, padded). */
function hl7DateTime(date: Date): string {
  const iso = date.toISOString(); // 2024-03-12T08:30:15.042Z
  const seconds = iso.slice(0, 19).replace(/\D/g, '');
  return date.getUTCMilliseconds() > 0 ? `${seconds}.${iso.slice(20, 23)}` : seconds;
}
