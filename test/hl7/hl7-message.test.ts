import { readFileSync } from 'node:fs';
import { getQuickJS } from 'quickjs-emscripten';
import { describe, expect, it } from 'vitest';
import { Hl7Message } from '../../runtime/hl7/hl7-message.js';

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

/** NTE-3 decoded, with `field` written as is into the message. */
function decoded(field: string, msh = MSH): string | undefined {
  return Hl7Message.parse(`${msh}\rNTE|1||${field}`).getSegment('NTE')?.getField(3);
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

describe('Hl7Message round trip', () => {
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

  it.each(rows)('gives back %s', (_name, { given, want }) => {
    expect(Hl7Message.parse(given).toString()).toBe(want);
  });

  it('changes only the field that was set', () => {
    const text = fixture('oru-r01');
    const message = Hl7Message.parse(text);
    message.getSegment('PID')?.setComponent(5, 2, 'Maria');
    expect(message.toString()).toBe(normalized(text).replace('^Mary^Anne', '^Maria^Anne'));
  });
});

describe('Hl7Message reads', () => {
  const messages = {
    adt: Hl7Message.parse(fixture('adt-a01')),
    oru: Hl7Message.parse(fixture('oru-r01')),
    orm: Hl7Message.parse(fixture('orm-o01')),
  };
  const obx = (n: number) => messages.oru.getAllSegments('OBX')[n - 1];
  const pid = messages.adt.getSegment('PID');
  type Read = [name: string, row: { given: () => unknown; want: unknown }];
  const rows: Read[] = [
    ['MSH-1 is the field separator', { given: () => messages.adt.header.getField(1), want: '|' }],
    [
      'MSH-2 is the encoding characters',
      { given: () => messages.adt.header.getField(2), want: raw`^~\&` },
    ],
    [
      'MSH-2 is not split',
      { given: () => messages.adt.header.getComponent(2, 1), want: raw`^~\&` },
    ],
    [
      'MSH-2 has no second component',
      { given: () => messages.adt.header.getComponent(2, 2), want: undefined },
    ],
    [
      'MSH-2 is one repetition',
      { given: () => messages.adt.header.getRepetitions(2), want: [raw`^~\&`] },
    ],
    ['MSH-3', { given: () => messages.adt.header.getField(3), want: 'EPIC' }],
    [
      'MSH-4.2',
      { given: () => messages.adt.header.getComponent(4, 2), want: '2.16.840.1.113883.3.72' },
    ],
    ['MSH-9 whole', { given: () => messages.adt.header.getField(9), want: 'ADT^A01^ADT_A01' }],
    ['MSH-9.1', { given: () => messages.adt.header.getComponent(9, 1), want: 'ADT' }],
    ['MSH-9.2', { given: () => messages.adt.header.getComponent(9, 2), want: 'A01' }],
    ['MSH-10', { given: () => messages.adt.header.getField(10), want: 'MSG00001' }],
    [
      'MSH-18, the last field',
      { given: () => messages.adt.header.getField(18), want: 'UNICODE UTF-8' },
    ],
    ['field 0 is the name', { given: () => pid?.getField(0), want: 'PID' }],
    ['an empty field', { given: () => pid?.getField(2), want: '' }],
    ['a field past the end', { given: () => pid?.getField(30), want: undefined }],
    ['a field number that is no integer', { given: () => pid?.getField(1.5), want: undefined }],
    [
      'PID-3 repetitions',
      {
        given: () => pid?.getRepetitions(3),
        want: ['555443333^^^SSA^SS', 'MRN0012345^^^ST_MARYS^MR'],
      },
    ],
    [
      'PID-3 repetition 2, component 1',
      { given: () => pid?.getComponent(3, 1, undefined, 2), want: 'MRN0012345' },
    ],
    [
      'PID-3 repetition 2, component 4',
      { given: () => pid?.getComponent(3, 4, undefined, 2), want: 'ST_MARYS' },
    ],
    [
      'PID-3 repetition 3 is absent',
      { given: () => pid?.getComponent(3, 1, undefined, 3), want: undefined },
    ],
    ['PID-5.1', { given: () => pid?.getComponent(5, 1), want: "O'Brien" }],
    [
      'PID-5 repetition 2, component 7',
      { given: () => pid?.getComponent(5, 7, undefined, 2), want: 'N' },
    ],
    ['PID-5 component 9 is absent', { given: () => pid?.getComponent(5, 9), want: undefined }],
    [
      'PID-11.1 decodes \\T\\',
      { given: () => pid?.getComponent(11, 1), want: '123 Main St&Apt 4B' },
    ],
    [
      'an escaped & is no subcomponent',
      { given: () => pid?.getComponent(11, 1, 2), want: undefined },
    ],
    [
      'PID-13 repetition 2, component 4',
      { given: () => pid?.getComponent(13, 4, undefined, 2), want: 'mary.obrien@example.com' },
    ],
    ['no repetitions in an empty field', { given: () => pid?.getRepetitions(2), want: [] }],
    [
      'AL1-5 decodes \\F\\',
      { given: () => messages.adt.getSegment('AL1')?.getField(5), want: 'Hives | rash' },
    ],
    ['PV1-3.2', { given: () => messages.adt.getSegment('PV1')?.getComponent(3, 2), want: '412' }],
    ['segment by index', { given: () => messages.adt.getSegment(3)?.name, want: 'NK1' }],
    ['segment 0 is MSH', { given: () => messages.adt.getSegment(0), want: messages.adt.header }],
    ['segment count', { given: () => messages.adt.segments.length, want: 9 }],
    ['no such segment name', { given: () => messages.adt.getSegment('ZZZ'), want: undefined }],
    ['no such segment index', { given: () => messages.adt.getSegment(99), want: undefined }],
    ['a negative index', { given: () => messages.adt.getSegment(-1), want: undefined }],
    [
      'all OBX',
      {
        given: () => messages.oru.getAllSegments('OBX').map((s) => s.getField(1)),
        want: ['1', '2', '3', '4', '5'],
      },
    ],
    ['OBX-6.2', { given: () => obx(1).getComponent(6, 2), want: 'milligram per deciliter' }],
    [
      'OBR-15.1 subcomponent 2',
      { given: () => messages.oru.getSegment('OBR')?.getComponent(15, 1, 2), want: 'Serum' },
    ],
    [
      'OBR-15.4 subcomponent 2',
      {
        given: () => messages.oru.getSegment('OBR')?.getComponent(15, 4, 2),
        want: 'Left antecubital fossa',
      },
    ],
    [
      'OBR-15.1 keeps its subcomponents',
      {
        given: () => messages.oru.getSegment('OBR')?.getComponent(15, 1),
        want: 'SER&Serum&HL70487',
      },
    ],
    [
      'OBX-5 repetitions, decoded',
      {
        given: () => obx(4).getRepetitions(5),
        want: ['Hemolyzed specimen & repeat advised', 'Lipemic'],
      },
    ],
    [
      'OBX-5 whole field',
      { given: () => obx(4).getField(5), want: 'Hemolyzed specimen & repeat advised~Lipemic' },
    ],
    ['OBX-8 repetitions', { given: () => obx(4).getRepetitions(8), want: ['A', 'H'] }],
    [
      'OBX-5 formatted text',
      {
        given: () => obx(5).getField(5),
        want: raw`Clinical history:\.br\Chest pain | dyspnea\.br\Report path: C:\reports\042.pdf`,
      },
    ],
    [
      'NTE-3 with hex and \\S\\',
      {
        given: () => messages.oru.getSegment('NTE')?.getField(3),
        want: "Tube labelled René O'Brien^ fasting status unknown.",
      },
    ],
    [
      'ORM OBR-13',
      {
        given: () => messages.orm.getSegment('OBR')?.getField(13),
        want: 'Rule out pneumonia | effusion',
      },
    ],
    [
      'ORM NTE-3',
      {
        given: () => messages.orm.getSegment('NTE')?.getField(3),
        want: 'Wheelchair~needs assistance; allergies: iodine & latex',
      },
    ],
    ['ORM MSH-12', { given: () => messages.orm.header.getField(12), want: '2.3.1' }],
    [
      'raw field keeps escapes',
      {
        given: () => messages.orm.getSegment('NTE')?.getRawField(3),
        want: raw`Wheelchair\R\needs assistance; allergies: iodine \T\ latex`,
      },
    ],
    ['segments are read-only', { given: () => Object.isFrozen(messages.adt.segments), want: true }],
  ];

  it.each(rows)('%s', (_name, { given, want }) => {
    expect(given()).toStrictEqual(want);
  });
});

describe('Hl7Message escapes', () => {
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
});

describe('Hl7Message writes', () => {
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

  it.each(rows)('setField encodes %s and reads it back', (_name, { given, want }) => {
    const segment = Hl7Message.parse(`${MSH}\rNTE|1`).getSegment('NTE');
    segment?.setField(3, given);
    expect(segment?.getRawField(3)).toBe(want);
    expect(segment?.getField(3)).toBe(given);
    expect(segment?.toString()).toBe(`NTE|1||${want}`);
  });

  const edits: [string, { given: (m: Hl7Message) => unknown; want: string }][] = [
    [
      'setField past the end pads',
      { given: (m) => m.getSegment('PID')?.setField(5, 'x'), want: 'PID|1||||x' },
    ],
    [
      'setComponent keeps the others',
      {
        given: (m) => m.getSegment('PID')?.setComponent(5, 3, 'A&B'),
        want: raw`PID|1||||Doe^Jane^A\T\B`,
      },
    ],
    [
      'setComponent pads components',
      {
        given: (m) => m.getSegment('PID')?.setComponent(3, 4, 'AUTH'),
        want: 'PID|1||^^^AUTH||Doe^Jane',
      },
    ],
    [
      'setComponent on repetition 2',
      {
        given: (m) => m.getSegment('PID')?.setComponent(5, 1, 'Roe', 2),
        want: 'PID|1||||Doe^Jane~Roe',
      },
    ],
    [
      'setRawField writes as is',
      { given: (m) => m.getSegment('PID')?.setRawField(5, 'Roe^Rick'), want: 'PID|1||||Roe^Rick' },
    ],
    ['setField on MSH-3', { given: (m) => m.header.setField(3, 'A^B'), want: raw`MSH|^~\&|A\S\B` }],
  ];

  it.each(edits)('%s', (_name, { given, want }) => {
    const message = Hl7Message.parse(raw`MSH|^~\&|APP` + '\rPID|1||||Doe^Jane');
    given(message);
    expect(message.toString().split('\r')).toContain(want);
  });

  const refused: [string, { given: (m: Hl7Message) => unknown; want: string }][] = [
    ['MSH-1', { given: (m) => m.header.setField(1, '!'), want: 'MSH-1 holds the separators' }],
    [
      'MSH-2',
      { given: (m) => m.header.setComponent(2, 1, '!'), want: 'MSH-2 holds the separators' },
    ],
    [
      'field 0',
      { given: (m) => m.getSegment('PID')?.setField(0, 'XYZ'), want: 'field numbers start at 1' },
    ],
    [
      'component 0',
      { given: (m) => m.getSegment('PID')?.setComponent(5, 0, 'x'), want: 'start at 1' },
    ],
  ];

  it.each(refused)('refuses to set %s', (_name, { given, want }) => {
    const message = Hl7Message.parse(`${MSH}\rPID|1`);
    expect(errorOf(() => given(message))?.message).toContain(want);
  });

  it('builds a message from segments', () => {
    const { delimiters } = Hl7Message.parse(MSH);
    const message = new Hl7Message([
      new Hl7Message.Segment(MSH, delimiters),
      new Hl7Message.Segment('PID|1', delimiters),
    ]);
    message.getSegment('PID')?.setComponent(5, 1, 'Doe');
    expect(message.toString()).toBe(`${MSH}\rPID|1||||Doe`);
    expect(errorOf(() => new Hl7Message([]))?.message).toContain('must start with an MSH segment');
  });
});

describe('Hl7Message separators', () => {
  const text =
    'MSH#$*/@#SEND#SFAC#RECV#RFAC#20240101120000##ADT$A01#CTRL9#P#2.5\rPID#1##ID1$$$A1*ID2$$$A2##Doe$Jane@X/T/Y#/F/x/E/';
  const message = Hl7Message.parse(text);
  const rows: [string, { given: () => unknown; want: unknown }][] = [
    ['round trip', { given: () => message.toString(), want: text }],
    [
      'delimiters',
      {
        given: () => message.delimiters,
        want: {
          field: '#',
          component: '$',
          repetition: '*',
          escape: '/',
          subcomponent: '@',
          truncation: '',
        },
      },
    ],
    ['MSH-9.2', { given: () => message.header.getComponent(9, 2), want: 'A01' }],
    [
      'repetition 2',
      { given: () => message.getSegment('PID')?.getComponent(3, 1, undefined, 2), want: 'ID2' },
    ],
    [
      'subcomponent with an escape',
      { given: () => message.getSegment('PID')?.getComponent(5, 2, 2), want: 'X@Y' },
    ],
    [
      'escapes use the declared characters',
      { given: () => message.getSegment('PID')?.getField(6), want: '#x/' },
    ],
    [
      'setField encodes with them',
      {
        given: () => message.getSegment('PID')?.setField(7, '#$*/@|^').getRawField(7),
        want: '/F//S//R//E//T/|^',
      },
    ],
    [
      'the ACK uses them',
      { given: () => message.buildAck().toString().split('\r')[1], want: 'MSA#AA#CTRL9' },
    ],
    [
      'the ACK swaps with them',
      { given: () => message.buildAck().header.getRawField(9), want: 'ACK$A01$ACK' },
    ],
  ];

  it.each(rows)('%s', (_name, { given, want }) => {
    expect(given()).toStrictEqual(want);
  });
});

describe('Hl7Message.buildAck', () => {
  const original = Hl7Message.parse(fixture('adt-a01'));
  const ack = original.buildAck();
  const rows: [string, { given: () => unknown; want: unknown }][] = [
    ['MSH-2 as the original', { given: () => ack.header.getField(2), want: raw`^~\&` }],
    ['MSH-3 is the original receiver', { given: () => ack.header.getField(3), want: 'GRAPHIR' }],
    [
      'MSH-4 is the original receiving facility',
      { given: () => ack.header.getField(4), want: 'GRAPHIR_FAC' },
    ],
    ['MSH-5 is the original sender', { given: () => ack.header.getField(5), want: 'EPIC' }],
    [
      'MSH-6 is the original sending facility, as written',
      { given: () => ack.header.getRawField(6), want: 'ST_MARYS^2.16.840.1.113883.3.72^ISO' },
    ],
    [
      'MSH-7 is a timestamp',
      { given: () => /^\d{14}$/.test(ack.header.getField(7) ?? ''), want: true },
    ],
    ['MSH-9', { given: () => ack.header.getField(9), want: 'ACK^A01^ACK' }],
    ['MSH-10 is new', { given: () => /^\d{20}$/.test(ack.header.getField(10) ?? ''), want: true }],
    ['MSH-11 as the original', { given: () => ack.header.getField(11), want: 'P' }],
    ['MSH-12 as the original', { given: () => ack.header.getField(12), want: '2.5.1' }],
    ['nothing after MSH-12', { given: () => ack.header.getField(13), want: undefined }],
    ['two segments', { given: () => ack.segments.map((s) => s.name), want: ['MSH', 'MSA'] }],
    [
      'MSA echoes the control id',
      { given: () => ack.getSegment('MSA')?.toString(), want: 'MSA|AA|MSG00001' },
    ],
    [
      'AE with text, encoded',
      {
        given: () =>
          original
            .buildAck({ ackCode: 'AE', text: 'Unknown patient | retry' })
            .getSegment('MSA')
            ?.toString(),
        want: raw`MSA|AE|MSG00001|Unknown patient \F\ retry`,
      },
    ],
    [
      'AR',
      {
        given: () => original.buildAck({ ackCode: 'AR' }).getSegment('MSA')?.toString(),
        want: 'MSA|AR|MSG00001',
      },
    ],
    [
      'a fresh control id each time',
      {
        given: () => original.buildAck().header.getField(10) === ack.header.getField(10),
        want: false,
      },
    ],
  ];

  it.each(rows)('%s', (_name, { given, want }) => {
    expect(given()).toStrictEqual(want);
  });

  it('timestamps in UTC, now', () => {
    const stamp = ack.header.getField(7) ?? '';
    const iso = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(8, 10)}:${stamp.slice(10, 12)}:${stamp.slice(12)}Z`;
    expect(Math.abs(Date.parse(iso) - Date.now())).toBeLessThan(60_000);
  });

  it('refuses an unknown ack code', () => {
    const options = { ackCode: 'XX' } as unknown as { ackCode: 'AA' };
    expect(errorOf(() => original.buildAck(options))?.message).toContain(
      'ackCode must be AA, AE or AR',
    );
  });
});

describe('Hl7Message.parse refuses broken messages', () => {
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
});

describe('Hl7Message on odd input', () => {
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
        segment.getField(n);
        segment.getRepetitions(n);
        segment.getComponent(n, 1, 1, 1);
        segment.getComponent(n, 2, undefined, 2);
      }
    }
    message.buildAck({ ackCode: 'AE', text: text.slice(0, 40) });
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
    expect(segment?.getField(5)?.length).toBeGreaterThan(0);
    segment?.getRepetitions(5);
    segment?.getComponent(5, 1);
  });
});

describe('Hl7Message is self-contained', () => {
  const text = normalized(fixture('oru-r01'));

  it('works when evaluated from its own source', () => {
    const Isolated = new Function(
      `${Hl7Message.toString()}; return Hl7Message;`,
    )() as typeof Hl7Message;
    expect(Isolated).not.toBe(Hl7Message);
    const message = Isolated.parse(text);
    expect(message).toBeInstanceOf(Isolated);
    expect(message.toString()).toBe(text);
    expect(message.getSegment('NTE')?.getField(3)).toBe(
      "Tube labelled René O'Brien^ fasting status unknown.",
    );
    expect(message.getSegment('PID')?.setField(5, 'a|b').getRawField(5)).toBe(raw`a\F\b`);
    expect(message.buildAck({ ackCode: 'AE', text: 'x^y' }).getSegment('MSA')?.toString()).toBe(
      raw`MSA|AE|LAB20240315-0042|x\S\y`,
    );
    expect(() => Isolated.parse('PID|1')).toThrow('must start with an MSH segment');
  });

  it('works inside QuickJS', async () => {
    const quickjs = await getQuickJS();
    const result = quickjs.evalCode(`${Hl7Message.toString()}
      const message = Hl7Message.parse(${JSON.stringify(text)});
      const ack = message.buildAck({ text: 'ok & done' });
      JSON.stringify([
        message.toString() === ${JSON.stringify(text)},
        message.getSegment('NTE').getField(3),
        message.getSegment('OBR').getComponent(15, 4, 2),
        message.getSegment('PID').setComponent(5, 2, '~').getField(5),
        ack.header.getField(9),
        ack.getSegment('MSA').toString(),
      ]);`);
    expect(JSON.parse(result as string)).toStrictEqual([
      true,
      "Tube labelled René O'Brien^ fasting status unknown.",
      'Left antecubital fossa',
      "O'Brien^~^Anne",
      'ACK^R01^ACK',
      raw`MSA|AA|LAB20240315-0042|ok \T\ done`,
    ]);
  });
});
