/**
 * What Graphir's HL7 classes do beyond Medplum's (medplum-parity.test.ts): escape sequences
 * decoded on read and encoded on write, tolerant and strict parsing, and no exception but a
 * plain Error on any input.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Hl7Field, Hl7Message, Hl7Segment } from '../../runtime/hl7/index.js';

// String.raw keeps HL7's backslashes as written on the wire: raw`\F\` is 3 characters.
const raw = String.raw;

/** A fixture as stored (LF endings, trailing newline). */
function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/hl7/${name}.hl7`, import.meta.url), 'utf8');
}

/** What toString gives back: segments joined by `\r`, no trailing terminator. */
function normalized(text: string): string {
  return text.trimEnd().split('\n').join('\r');
}

const MSH = raw`MSH|^~\&|SEND|SFAC|RECV|RFAC|20240101120000||ADT^A08|CTRL1|P|2.5`;

/** NTE-3.1 decoded, with `field` written as is into the message. */
function decoded(field: string, msh = MSH): string | undefined {
  return Hl7Message.parse(`${msh}\rNTE|1||${field}`).getSegment('NTE')?.getComponent(3, 1);
}

/** The error `run` throws, checked to be a plain Error (never a TypeError or RangeError). */
function errorOf(run: () => unknown): Error | undefined {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(TypeError);
    expect(error).not.toBeInstanceOf(RangeError);
    return error as Error;
  }
  return undefined;
}

describe('parse', () => {
  const rows: [string, { given: string; want: string }][] = [];
  for (const name of ['adt-a01', 'oru-r01', 'orm-o01']) {
    const text = fixture(name);
    const lines = text.trimEnd().split('\n');
    for (const [ending, label] of [
      ['\r', 'CR'],
      ['\n', 'LF'],
      ['\r\n', 'CRLF'],
    ]) {
      rows.push([
        `${name} with ${label} endings`,
        { given: lines.join(ending) + ending, want: normalized(text) },
      ]);
    }
  }
  rows.push(
    [
      'mixed endings and blank lines',
      { given: `${MSH}\r\n\r\nPID|1\n\n\rPV1|1\r  \r\n`, want: `${MSH}\rPID|1\rPV1|1` },
    ],
    ['MLLP framing and a BOM', { given: `\v\uFEFF${MSH}\rPID|1\r\x1c\r`, want: `${MSH}\rPID|1` }],
    [
      'empty trailing fields and a bare segment',
      { given: `${MSH}|||\rZZZ\rPID|1||\r`, want: `${MSH}|||\rZZZ\rPID|1||` },
    ],
  );

  it.each(rows)('gives back %s as ER7', (_name, { given, want }) => {
    expect(Hl7Message.parse(given).toString()).toBe(want);
  });

  it('changes only the component that was set', () => {
    const text = fixture('oru-r01');
    const message = Hl7Message.parse(text);
    expect(message.getSegment('PID')?.setComponent(5, 2, 'Maria')).toBe(true);
    expect(message.toString()).toBe(normalized(text).replace('^Mary^Anne', '^Maria^Anne'));
  });

  it('reads a v2.7 truncation character and keeps it in MSH-2 and the ACK', () => {
    const message = Hl7Message.parse(
      raw`MSH|^~\&#|S|F|R|F|20240101||ADT^A01|1|P|2.7` + '\rNTE|1||a\\P\\b',
    );
    expect(message.header.getField(2).toString()).toBe(raw`^~\&#`);
    expect(message.context.truncationCharacter).toBe('#');
    expect(message.buildAck().header.getField(2).toString()).toBe(raw`^~\&#`);
    expect(
      message
        .buildAck()
        .toString()
        .startsWith(raw`MSH|^~\&#|R|F|S|F|`),
    ).toBe(true);
  });
});

describe('reads decode escape sequences', () => {
  const rows: [string, { given: string; want: string; msh?: string }][] = [
    ['\\F\\ field separator', { given: raw`a\F\b`, want: 'a|b' }],
    ['\\S\\ component separator', { given: raw`a\S\b`, want: 'a^b' }],
    ['\\T\\ subcomponent separator', { given: raw`a\T\b`, want: 'a&b' }],
    ['\\R\\ repetition separator', { given: raw`a\R\b`, want: 'a~b' }],
    ['\\E\\ escape character', { given: raw`C:\E\temp`, want: raw`C:\temp` }],
    ['adjacent escapes', { given: raw`\F\\S\\E\\T\\R\.`, want: raw`|^\&~.` }],
    ['\\X\\ as UTF-8', { given: raw`Ren\XC3A9\!`, want: 'René!' }],
    ['\\X\\ with lower-case hex and 3 bytes', { given: raw`\Xe282ac\5`, want: '€5' }],
    ['\\X\\ as Latin-1 when not UTF-8', { given: raw`Ren\XE9\!`, want: 'René!' }],
    ['\\X\\ control characters', { given: raw`a\X0D0A\b`, want: 'a\r\nb' }],
    ['\\X\\ with an odd digit count stays', { given: raw`\X0D0\.`, want: raw`\X0D0\.` }],
    ['\\X\\ with no digits stays', { given: raw`\X\.`, want: raw`\X\.` }],
    ['\\.br\\ stays', { given: raw`one\.br\two`, want: raw`one\.br\two` }],
    ['\\H\\ and \\N\\ stay', { given: raw`\H\bold\N\ text`, want: raw`\H\bold\N\ text` }],
    [
      '\\.sp\\ \\.in\\ \\.ti\\ \\.ce\\ stay',
      { given: raw`\.sp2\\.in+4\\.ti-2\\.ce\x`, want: raw`\.sp2\\.in+4\\.ti-2\\.ce\x` },
    ],
    [
      'character set \\C\\ and \\M\\ stay',
      { given: raw`\C2842\ab\M2442\.`, want: raw`\C2842\ab\M2442\.` },
    ],
    ['local \\Z\\ stays', { given: raw`\Zlocal\.`, want: raw`\Zlocal\.` }],
    ['unknown \\Q\\ stays', { given: raw`a\Q\b`, want: raw`a\Q\b` }],
    ['lower-case \\f\\ is no escape', { given: raw`a\f\b`, want: raw`a\f\b` }],
    ['an unclosed escape is text', { given: raw`a\F\b\c`, want: raw`a|b\c` }],
    ['a lone escape character', { given: '\\', want: '\\' }],
    [
      '\\P\\ with a truncation character',
      { given: raw`a\P\b`, want: 'a#b', msh: raw`MSH|^~\&#|S|F|R|F|20240101||ADT^A01|1|P|2.7` },
    ],
    ['\\P\\ without one stays', { given: raw`a\P\b`, want: raw`a\P\b` }],
  ];

  it.each(rows)('%s', (_name, { given, want, msh }) => {
    expect(decoded(given, msh)).toBe(want);
  });

  const messages = {
    adt: Hl7Message.parse(fixture('adt-a01')),
    oru: Hl7Message.parse(fixture('oru-r01')),
    orm: Hl7Message.parse(fixture('orm-o01')),
  };
  const reads: [string, { given: () => unknown; want: unknown }][] = [
    [
      'PID-11.1 decodes \\T\\',
      {
        given: () => messages.adt.getSegment('PID')?.getComponent(11, 1),
        want: '123 Main St&Apt 4B',
      },
    ],
    [
      'an escaped & is no subcomponent',
      { given: () => messages.adt.getSegment('PID')?.getComponent(11, 1, 1), want: '' },
    ],
    [
      'AL1-5.1 decodes \\F\\',
      { given: () => messages.adt.getSegment('AL1')?.getComponent(5, 1), want: 'Hives | rash' },
    ],
    [
      'OBX-5 repetition 0, decoded',
      {
        given: () => messages.oru.getAllSegments('OBX')[3].getComponent(5, 1),
        want: 'Hemolyzed specimen & repeat advised',
      },
    ],
    [
      'OBX-5 formatted text stays',
      {
        given: () => messages.oru.getAllSegments('OBX')[4].getField(5).getComponent(1),
        want: raw`Clinical history:\.br\Chest pain | dyspnea\.br\Report path: C:\reports\042.pdf`,
      },
    ],
    [
      'NTE-3 with hex and \\S\\',
      {
        given: () => messages.oru.getSegment('NTE')?.getComponent(3, 1),
        want: "Tube labelled René O'Brien^ fasting status unknown.",
      },
    ],
    [
      'ORM NTE-3 with \\R\\ is one repetition',
      {
        given: () => messages.orm.getSegment('NTE')?.getField(3).components.length,
        want: 1,
      },
    ],
    [
      'toString keeps escapes as written',
      {
        given: () => messages.orm.getSegment('NTE')?.getField(3).toString(),
        want: raw`Wheelchair\R\needs assistance; allergies: iodine \T\ latex`,
      },
    ],
    [
      'a component with subcomponents keeps its separators',
      {
        given: () => messages.oru.getSegment('OBR')?.getComponent(15, 1),
        want: 'SER&Serum&HL70487',
      },
    ],
    [
      'other separators, escaped with their own escape character',
      {
        given: () =>
          Hl7Message.parse('MSH#$*/@#A\rNTE#1##x/F/y/S/z/E/').getSegment('NTE')?.getComponent(3, 1),
        want: 'x#y$z/',
      },
    ],
  ];

  it.each(reads)('%s', (_name, { given, want }) => {
    expect(given()).toStrictEqual(want);
  });
});

describe('writes encode escape sequences', () => {
  const rows: [string, { given: string; want: string }][] = [
    ['plain text', { given: 'plain text', want: 'plain text' }],
    ['empty', { given: '', want: '' }],
    ['a field separator', { given: 'a|b', want: raw`a\F\b` }],
    ['a component separator', { given: 'a^b', want: raw`a\S\b` }],
    ['a subcomponent separator', { given: 'a&b', want: raw`a\T\b` }],
    ['a repetition separator', { given: 'a~b', want: raw`a\R\b` }],
    ['the escape character', { given: raw`C:\dir`, want: raw`C:\E\dir` }],
    ['all delimiters', { given: raw`|^~\&.`, want: raw`\F\\S\\R\\E\\T\.` }],
    ['line breaks', { given: 'one\r\ntwo', want: raw`one\X0D\\X0A\two` }],
    ['a formatting sequence is literal text', { given: raw`a\.br\b`, want: raw`a\E\.br\E\b` }],
    ['non-ASCII text', { given: 'René €', want: 'René €' }],
  ];

  it.each(rows)('setComponent encodes %s and reads it back', (_name, { given, want }) => {
    const segment = Hl7Message.parse(`${MSH}\rNTE|1||x`).getSegment('NTE');
    expect(segment?.setComponent(3, 1, given)).toBe(true);
    expect(segment?.getField(3).toString()).toBe(want);
    expect(segment?.getComponent(3, 1)).toBe(given);
    expect(segment?.toString()).toBe(`NTE|1||${want}`);
  });

  const edits: [string, { given: (m: Hl7Message) => unknown; want: string }][] = [
    [
      'a subcomponent is encoded and the others kept',
      {
        given: (m) => m.getSegment('PID')?.setComponent(3, 1, 'A&B', 1),
        want: raw`PID|1||X&A\T\B&Z||Doe^Jane`,
      },
    ],
    [
      'setField takes ER7 text, as Medplum',
      {
        given: (m) => m.getSegment('PID')?.setField(5, 'Roe^Rick~Doe'),
        want: 'PID|1||X&Y&Z||Roe^Rick~Doe',
      },
    ],
    [
      'setField with a made field',
      {
        given: (m) => m.getSegment('PID')?.setField(6, new Hl7Field([['a|b']], m.context)),
        want: 'PID|1||X&Y&Z||Doe^Jane|a|b',
      },
    ],
    [
      'a field made from a value is encoded by setComponent',
      {
        given: (m) => {
          const field = new Hl7Field([['']], m.context);
          field.setComponent(1, 'a|b');
          return m.getSegment('PID')?.setField(6, field);
        },
        want: raw`PID|1||X&Y&Z||Doe^Jane|a\F\b`,
      },
    ],
    [
      'a number is written as text',
      {
        given: (m) => m.getSegment('PID')?.setComponent(1, 1, 7 as unknown as string),
        want: 'PID|7||X&Y&Z||Doe^Jane',
      },
    ],
  ];

  it.each(edits)('%s', (_name, { given, want }) => {
    const message = Hl7Message.parse(raw`MSH|^~\&|APP` + '\rPID|1||X&Y&Z||Doe^Jane');
    given(message);
    expect(message.toString().split('\r')).toContain(want);
  });

  const refused: [string, (m: Hl7Message) => unknown][] = [
    ['MSH-1', (m) => m.header.setField(1, '!')],
    ['MSH-2', (m) => m.header.setField(2, '!!!!')],
    ['a component of MSH-2', (m) => m.header.setComponent(2, 1, '!')],
    ['field 0', (m) => m.getSegment('PID')?.setField(0, 'XYZ')],
    ['a negative field', (m) => m.getSegment('PID')?.setField(-1, 'x')],
    ['a field number that is no integer', (m) => m.getSegment('PID')?.setField(1.5, 'x')],
    ['component 0', (m) => m.getSegment('PID')?.setComponent(5, 0, 'x')],
    ['a negative repetition', (m) => m.getSegment('PID')?.setComponent(5, 1, 'x', undefined, -1)],
    ['a negative subcomponent', (m) => m.getSegment('PID')?.setComponent(5, 1, 'x', -1)],
    [
      'a repetition that is no integer',
      (m) => m.getSegment('PID')?.setComponent(5, 1, 'x', 0, 0.5),
    ],
    ['a segment at a negative index', (m) => m.setSegment(-1, Hl7Segment.parse('ZZZ|1'))],
  ];

  it.each(refused)('refuses to set %s: false, nothing changed', (_name, edit) => {
    const message = Hl7Message.parse(`${MSH}\rPID|1||||Doe`);
    expect(edit(message)).toBe(false);
    expect(message.toString()).toBe(`${MSH}\rPID|1||||Doe`);
  });
});

describe('buildAck', () => {
  const original = Hl7Message.parse(fixture('adt-a01'));
  const ack = original.buildAck();

  it('answers with MSA text, separators and timestamps as expected', () => {
    expect(ack.header.getField(9).toString()).toBe('ACK^A01^ACK');
    expect(ack.getSegment('MSA')?.toString()).toBe('MSA|AA|MSG00001|OK');
    expect(ack.header.getField(7).toString()).toMatch(/^\d{14}(\.\d{3})?$/);
    const stamp = ack.header.getField(7).toString();
    const iso = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(8, 10)}:${stamp.slice(10, 12)}:${stamp.slice(12, 14)}Z`;
    expect(Math.abs(Date.parse(iso) - Date.now())).toBeLessThan(60_000);
  });

  it('gives each ACK a later control id, even within a millisecond', () => {
    const ids = Array.from({ length: 50 }, () =>
      Number(original.buildAck().header.getField(10).toString()),
    );
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]);
  });

  it('takes MSA-3 text, encoded, and an ERR segment', () => {
    const err = Hl7Segment.parse(
      'ERR|||207^Application internal error^HL70357|E',
      original.context,
    );
    const nack = original.buildAck({
      ackCode: 'AE',
      text: 'Unknown patient | retry',
      errSegment: err,
    });
    expect(nack.segments.map(String).slice(1)).toStrictEqual([
      raw`MSA|AE|MSG00001|Unknown patient \F\ retry`,
      'ERR|||207^Application internal error^HL70357|E',
    ]);
    expect(nack.getAckType()).toBe('AE');
  });

  it('refuses an unknown ack code', () => {
    const options = { ackCode: 'XX' } as unknown as { ackCode: 'AA' };
    expect(errorOf(() => original.buildAck(options))?.message).toContain(
      'ackCode must be one of AA, AE, AR, CA, CE, CR, not "XX"',
    );
  });

  it('reads an ACK type whatever its case, and none that is not one', () => {
    expect(Hl7Message.parse(`${MSH}\rMSA|ca|1`).getAckType()).toBe('CA');
    expect(Hl7Message.parse(`${MSH}\rMSA|XX|1`).getAckType()).toBeUndefined();
    expect(Hl7Message.parse(`${MSH}\rMSA|toString|1`).getAckType()).toBeUndefined();
    expect(Hl7Message.parse(MSH).getAckType()).toBeUndefined();
  });
});

describe('parse refuses broken messages', () => {
  const rows: [string, { given: unknown; want: string }][] = [
    ['empty text', { given: '', want: 'must start with an MSH segment' }],
    ['blank lines only', { given: '\r\n\r\n', want: 'must start with an MSH segment' }],
    [
      'no MSH first',
      { given: `PID|1\r${MSH}`, want: 'must start with an MSH segment, not "PID|1"' },
    ],
    ['lower-case msh', { given: 'msh|^~\\&|A', want: 'must start with an MSH segment' }],
    ['not text', { given: 42, want: 'must be text' }],
    ['MSH shorter than 8 characters', { given: 'MSH|^~\\', want: 'too short' }],
    [
      '3 encoding characters',
      { given: 'MSH|^~\\|A|B', want: 'MSH-2 must hold 4 encoding characters' },
    ],
    [
      '6 encoding characters',
      { given: 'MSH|^~\\&#!|A', want: 'MSH-2 must hold 4 encoding characters' },
    ],
    ['a letter as separator', { given: 'MSHA^~\\&AB', want: 'not letters, digits or spaces' }],
    [
      'a digit as encoding character',
      { given: 'MSH|^~\\1|A', want: 'not letters, digits or spaces' },
    ],
    ['a space as separator', { given: 'MSH ^~\\& A', want: 'not letters, digits or spaces' }],
    ['a repeated encoding character', { given: 'MSH|^~^&|A', want: 'must be distinct' }],
    ['a repeated escape character', { given: 'MSH|^~\\\\|A', want: 'must be distinct' }],
  ];

  it.each(rows)('%s', (_name, { given, want }) => {
    expect(errorOf(() => Hl7Message.parse(given as string))?.message).toContain(want);
  });

  it('refuses to make a message or segment of anything but an array', () => {
    expect(errorOf(() => new Hl7Message('MSH|^~\\&' as never))?.message).toContain(
      'array of segments',
    );
    expect(errorOf(() => new Hl7Segment('PID|1' as never))?.message).toContain('array of fields');
  });
});

describe('odd input', () => {
  /** Parses, then calls everything a bot might: true when it parsed, false on a clean Error. */
  function exercise(text: string): boolean {
    let message: Hl7Message;
    try {
      message = Hl7Message.parse(text);
    } catch (error) {
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(TypeError);
      expect(error).not.toBeInstanceOf(RangeError);
      return false;
    }
    expect(Hl7Message.parse(message.toString()).toString()).toBe(message.toString());
    for (const segment of message.segments) {
      for (let n = 0; n <= 4; n++) {
        segment.getField(n)?.toString();
        segment.getComponent(n, 1, 1, 1);
        segment.getComponent(n, 2, undefined, 2);
        segment.setComponent(n + 3, 2, text.slice(0, 9), 1, 1);
      }
    }
    message.buildAck({ ackCode: 'AE', text: text.slice(0, 40) }).toString();
    message.getAckType();
    return true;
  }

  /** xorshift32: the same pseudo-random strings on every run. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 2 ** 32;
    };
  }

  it('returns or throws an Error on random bytes, truncations and mutations', () => {
    const next = random(0x2545f491);
    const alphabet = '|^~\\&#\r\nMSHPIDXF0123456789 \x00\x1c\v\uFEFFé\u{1F600}';
    const inputs: string[] = [];
    for (let i = 0; i < 300; i++) {
      const length = Math.floor(next() * 80);
      inputs.push(
        Array.from({ length }, () => String.fromCharCode(Math.floor(next() * 256))).join(''),
      );
      inputs.push(
        `MSH${Array.from({ length }, () => [...alphabet][Math.floor(next() * [...alphabet].length)]).join('')}`,
      );
    }
    for (const name of ['adt-a01', 'oru-r01', 'orm-o01']) {
      const text = fixture(name);
      for (let cut = 0; cut <= text.length; cut += 7) inputs.push(text.slice(0, cut));
      for (let i = 0; i < 50; i++) {
        const at = Math.floor(next() * text.length);
        inputs.push(
          text.slice(0, at) + [...alphabet][Math.floor(next() * 10)] + text.slice(at + 1),
        );
      }
    }
    let parsed = 0;
    for (const input of inputs) {
      if (exercise(input)) parsed++;
    }
    expect(parsed).toBeGreaterThan(100);
  });

  it.each([
    ['a 5 MB field', 'A'.repeat(5_000_000)],
    ['250 000 escapes', raw`\F\\X41\ `.repeat(250_000)],
    ['a million escape characters', '\\'.repeat(1_000_000)],
    ['a million repetitions', '~'.repeat(1_000_000)],
  ])('reads %s in linear time (a quadratic reader would outlast the test)', (_name, field) => {
    const segment = Hl7Message.parse(`${MSH}\rOBX|1|TX|x||${field}`).getSegment('OBX');
    expect(segment?.getField(5)?.toString().length).toBeGreaterThan(0);
    expect(segment?.getComponent(5, 1, 0)).toBeDefined();
    expect(segment?.getField(5).components.length).toBeGreaterThan(0);
  });
});
