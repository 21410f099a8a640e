/**
 * HL7 v2 messages in ER7 ("pipe and hat") encoding: parse, read, edit, acknowledge, write back.
 *
 * SELF-CONTAINED ON PURPOSE: the bot sandbox (QuickJS) gets this class by evaluating
 * `Hl7Message.toString()` — the class's own compiled source — inside the isolate. So the class
 * must not use imports or anything declared at module level: helpers are `static #private`
 * members, and the segment class is the static member `Hl7Message.Segment` (a class expression,
 * hence part of the source text). Only erased types live outside the class. Note that tsx
 * (esbuild `keepNames`) adds `static { __name(this, "…") }` to classes; a loader evaluating a
 * tsx-compiled source must define `__name` first (e.g. `var __name = (t) => t;`).
 *
 * Values are kept as written and decoded only when read, so a message parsed and written back
 * unchanged gives back the same text (segments joined by `\r`, without a trailing one), escape
 * sequences included; only values set through `setField`/`setComponent` are encoded.
 *
 * Escapes decoded on read: `\F\ \S\ \T\ \R\ \E\` (the delimiters), `\P\` (v2.7 truncation
 * character, when MSH-2 declares one) and `\Xhh…\` (bytes, read as UTF-8, else Latin-1). Every
 * other sequence — the formatting ones `\H\ \N\ \.br\ \.sp\ \.in\ \.ti\ \.ce\`, `\Cxxyy\`,
 * `\Mxxyyzz\`, `\Z…\` — is returned as written, escape characters included; an escape character
 * with no closing one is plain text. On write, the delimiters are escaped and CR/LF become
 * `\X0D\`/`\X0A\` (a value is literal text: `\.br\` in it is written as `\E\.br\E\`).
 *
 * @see HL7 v2.5.1 chapter 2, 2.5 (message construction rules) and 2.7 (use of escape sequences)
 */

/** A segment of an {@link Hl7Message}; the class itself is `Hl7Message.Segment`. */
export type Hl7Segment = InstanceType<typeof Hl7Message.Segment>;

/** The separators a message declares in MSH-1 and MSH-2. */
export interface Hl7Delimiters {
  readonly field: string;
  readonly component: string;
  readonly repetition: string;
  readonly escape: string;
  readonly subcomponent: string;
  /** v2.7's truncation character (MSH-2's 5th), or '' when the message declares none. */
  readonly truncation: string;
}

export class Hl7Message {
  /**
   * One segment. Field numbers follow HL7: on MSH, field 1 is the field separator itself and
   * field 2 the encoding characters (neither is split nor decoded), so `getField(9)` is MSH-9.
   * Field 0 is the segment's name. Component, subcomponent and repetition numbers start at 1.
   */
  static readonly Segment = class Hl7Segment {
    readonly name: string;
    readonly delimiters: Hl7Delimiters;
    /** Fields as written (escapes not decoded), by HL7 number: [0] is the name. */
    readonly #fields: string[];

    /** A segment from its ER7 text, e.g. `new Hl7Message.Segment('PID|1', message.delimiters)`. */
    constructor(text: string, delimiters: Hl7Delimiters) {
      const parts = String(text).split(delimiters.field);
      this.name = parts[0];
      this.delimiters = delimiters;
      this.#fields = this.#isHeader() ? [parts[0], delimiters.field, ...parts.slice(1)] : parts;
    }

    /** The field as written, escape sequences not decoded (to copy it verbatim). */
    getRawField(n: number): string | undefined {
      return Number.isInteger(n) && n >= 0 ? this.#fields[n] : undefined;
    }

    /** The whole field (all repetitions and components, separators as written), decoded. */
    getField(n: number): string | undefined {
      const raw = this.getRawField(n);
      return raw === undefined || this.#isEncodingField(n)
        ? raw
        : Hl7Message.#decode(raw, this.delimiters);
    }

    /** Each repetition of the field, decoded; none for an empty or absent field. */
    getRepetitions(n: number): string[] {
      const raw = this.getRawField(n);
      if (!raw) return [];
      if (this.#isEncodingField(n)) return [raw];
      return raw
        .split(this.delimiters.repetition)
        .map((r) => Hl7Message.#decode(r, this.delimiters));
    }

    /** A component (or one of its subcomponents) of a repetition of a field, decoded. */
    getComponent(
      field: number,
      component: number,
      subcomponent?: number,
      repetition = 1,
    ): string | undefined {
      const raw = this.getRawField(field);
      if (raw === undefined) return undefined;
      if (this.#isEncodingField(field)) {
        return component === 1 && (subcomponent ?? 1) === 1 && repetition === 1 ? raw : undefined;
      }
      const d = this.delimiters;
      let value = raw.split(d.repetition)[repetition - 1]?.split(d.component)[component - 1];
      if (subcomponent != null) value = value?.split(d.subcomponent)[subcomponent - 1];
      return value === undefined ? undefined : Hl7Message.#decode(value, d);
    }

    /** Sets a whole field to `value` as literal text (delimiters in it are escaped). */
    setField(n: number, value: string): this {
      this.#checkWritable(n);
      while (this.#fields.length <= n) this.#fields.push('');
      this.#fields[n] = Hl7Message.#encode(value, this.delimiters);
      return this;
    }

    /** Sets one component of a repetition of a field (escaped), keeping the others. */
    setComponent(field: number, component: number, value: string, repetition = 1): this {
      this.#checkWritable(field);
      if (
        !Number.isInteger(component) ||
        component < 1 ||
        !Number.isInteger(repetition) ||
        repetition < 1
      ) {
        throw new Error(`${this.name}-${field}: component and repetition numbers start at 1`);
      }
      const d = this.delimiters;
      const repetitions = (this.getRawField(field) ?? '').split(d.repetition);
      while (repetitions.length < repetition) repetitions.push('');
      const components = repetitions[repetition - 1].split(d.component);
      while (components.length < component) components.push('');
      components[component - 1] = Hl7Message.#encode(value, d);
      repetitions[repetition - 1] = components.join(d.component);
      return this.setRawField(field, repetitions.join(d.repetition));
    }

    /** Sets a field to text already in ER7 (escaped, separators meaningful). */
    setRawField(n: number, raw: string): this {
      this.#checkWritable(n);
      while (this.#fields.length <= n) this.#fields.push('');
      this.#fields[n] = String(raw);
      return this;
    }

    /** The segment as ER7 text, without a segment terminator. */
    toString(): string {
      const fields = this.#isHeader() ? [this.name, ...this.#fields.slice(2)] : this.#fields;
      return fields.join(this.delimiters.field);
    }

    /** MSH (and the batch headers BHS, FHS) number the field separator as field 1. */
    #isHeader(): boolean {
      return this.name === 'MSH' || this.name === 'BHS' || this.name === 'FHS';
    }

    #isEncodingField(n: number): boolean {
      return this.#isHeader() && (n === 1 || n === 2);
    }

    #checkWritable(n: number): void {
      if (!Number.isInteger(n) || n < 1) {
        throw new Error(`${this.name}: field numbers start at 1, not ${n}`);
      }
      if (this.#isEncodingField(n)) {
        throw new Error(`${this.name}-${n} holds the separators and cannot be set`);
      }
    }
  };

  readonly #segments: readonly Hl7Segment[];

  /** A message from its segments; the first must be MSH, whose delimiters the message uses. */
  constructor(segments: readonly Hl7Segment[]) {
    if (!Array.isArray(segments) || segments[0]?.name !== 'MSH') {
      throw new Error('An HL7 v2 message must start with an MSH segment');
    }
    this.#segments = Object.freeze([...segments]);
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
    const d = Hl7Message.#readDelimiters(first);
    return new Hl7Message(lines.map((line) => new Hl7Message.Segment(line, d)));
  }

  /** The separators, as MSH-1 and MSH-2 declare them. */
  get delimiters(): Hl7Delimiters {
    return this.header.delimiters;
  }

  /** The segments, in order (read-only; edit a segment through its setters). */
  get segments(): readonly Hl7Segment[] {
    return this.#segments;
  }

  /** The MSH segment. */
  get header(): Hl7Segment {
    return this.#segments[0];
  }

  /** The first segment with that name, or the segment at that index (0 is MSH). */
  getSegment(nameOrIndex: string | number): Hl7Segment | undefined {
    if (typeof nameOrIndex === 'number') {
      return Number.isInteger(nameOrIndex) ? this.#segments[nameOrIndex] : undefined;
    }
    return this.#segments.find((segment) => segment.name === nameOrIndex);
  }

  getAllSegments(name: string): Hl7Segment[] {
    return this.#segments.filter((segment) => segment.name === name);
  }

  /** The message as ER7: segments joined by `\r`. */
  toString(): string {
    return this.#segments.map((segment) => segment.toString()).join('\r');
  }

  /**
   * An original-mode acknowledgment: MSH with sender and receiver swapped (MSH-3/4 ↔ MSH-5/6), a
   * new UTC timestamp and control id, `ACK^<trigger>^ACK`, the same processing id and version;
   * then MSA with the code (AA by default), the original MSH-10 and, when given, the text.
   */
  buildAck(options: { ackCode?: 'AA' | 'AE' | 'AR'; text?: string } = {}): Hl7Message {
    const { ackCode: code = 'AA', text } = options ?? {};
    if (code !== 'AA' && code !== 'AE' && code !== 'AR') {
      throw new Error(`ackCode must be AA, AE or AR, not ${JSON.stringify(code)}`);
    }
    const h = this.header;
    const d = this.delimiters;
    const raw = (n: number): string => h.getRawField(n) ?? '';
    const trigger = raw(9).split(d.repetition)[0].split(d.component)[1] ?? '';
    const timestamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const controlId = timestamp + String(Math.floor(Math.random() * 1e6)).padStart(6, '0');
    const type = ['ACK', trigger, 'ACK'].join(d.component);
    const msh = ['MSH', raw(2), raw(5), raw(6), raw(3), raw(4), timestamp, '', type, controlId];
    msh.push(raw(11), raw(12));
    while (msh[msh.length - 1] === '') msh.pop();
    const msa = ['MSA', code, raw(10)];
    if (text) msa.push(Hl7Message.#encode(text, d));
    return Hl7Message.parse(`${msh.join(d.field)}\r${msa.join(d.field)}`);
  }

  /** MSH-1 and MSH-2: 1 + 4 (or 5, with v2.7's truncation character) distinct non-alphanumerics. */
  static #readDelimiters(msh: string): Hl7Delimiters {
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
    return Object.freeze({ field, component, repetition, escape, subcomponent, truncation });
  }

  /** Decodes escape sequences; each escape character opens a sequence closed by the next one. */
  static #decode(raw: string, d: Hl7Delimiters): string {
    if (!raw.includes(d.escape)) return raw;
    const named = new Map(Hl7Message.#codes(d).map(([ch, code]) => [code, ch]));
    let out = '';
    let from = 0;
    for (let start = raw.indexOf(d.escape); start >= 0; start = raw.indexOf(d.escape, from)) {
      const end = raw.indexOf(d.escape, start + 1);
      if (end < 0) break;
      const body = raw.slice(start + 1, end);
      out +=
        raw.slice(from, start) +
        (named.get(body) ?? Hl7Message.#decodeHex(body) ?? d.escape + body + d.escape);
      from = end + 1;
    }
    return out + raw.slice(from);
  }

  /** `Xhh…` as UTF-8 (else Latin-1) text; undefined when not hex bytes. */
  static #decodeHex(body: string): string | undefined {
    if (!/^X(?:[0-9A-Fa-f]{2})+$/.test(body)) return undefined;
    const bytes = body.slice(1).match(/../g) ?? [];
    try {
      return decodeURIComponent(bytes.map((b) => `%${b}`).join(''));
    } catch {
      return bytes.map((b) => String.fromCharCode(parseInt(b, 16))).join('');
    }
  }

  /** Escapes the delimiters and CR/LF, so that the value reads back as given. */
  static #encode(value: string, d: Hl7Delimiters): string {
    const codes = new Map([...Hl7Message.#codes(d), ['\r', 'X0D'], ['\n', 'X0A']]);
    let out = '';
    for (const ch of String(value ?? '')) {
      const code = codes.get(ch);
      out += code === undefined ? ch : d.escape + code + d.escape;
    }
    return out;
  }

  /** [character, escape code] for each delimiter the message declares. */
  static #codes(d: Hl7Delimiters): [string, string][] {
    const codes: [string, string][] = [
      [d.field, 'F'],
      [d.component, 'S'],
      [d.subcomponent, 'T'],
      [d.repetition, 'R'],
      [d.escape, 'E'],
      [d.truncation, 'P'],
    ];
    return codes.filter(([ch]) => ch !== '');
  }
}
