/**
 * Graphir's HL7 classes against Medplum's own, on the same messages: every read a bot makes
 * (numbering of segments, fields, components, subcomponents and repetitions, the deprecated
 * `get`s, absent parts), edits, and the ACK. Where Graphir decodes escape sequences and Medplum
 * does not, Graphir's value is Medplum's decoded.
 */
import '../client/websocket-stand-in.js';
import { readFileSync } from 'node:fs';
import * as medplum from '@medplum/core';
import { describe, expect, it } from 'vitest';
import { Hl7Context, Hl7Field, Hl7Message, Hl7Segment } from '../../runtime/hl7/index.js';
import { decodeEscapes } from '../../runtime/hl7/escapes.js';

const raw = String.raw;

/** A fixture as ER7: segments joined by `\r`, no terminator after the last. */
function fixture(name: string): string {
  const text = readFileSync(new URL(`../fixtures/hl7/${name}.hl7`, import.meta.url), 'utf8');
  return text.trimEnd().split('\n').join('\r');
}

const MESSAGES: Record<string, string> = {
  'adt-a01': fixture('adt-a01'),
  'oru-r01': fixture('oru-r01'),
  'orm-o01': fixture('orm-o01'),
  'other separators':
    'MSH#$*/@#SEND#SFAC#RECV#RFAC#20240101120000##ADT$A01#CTRL9#P#2.5\rPID#1##ID1$$$A1*ID2$$$A2##Doe$Jane@X/T/Y#/F/x/E/',
  'a v2.1 message type and no version': raw`MSH|^~\&|A|B|C|D|20240101||ADT|7|T` + '\rEVN|A01',
  'two components in MSH-9': raw`MSH|^~\&|A|B|C|D|20240101||ADT^A04|8|P|2.3`,
};

/** Every read of a segment, by the same calls on both classes. */
function reads(segment: medplum.Hl7Segment | Hl7Segment): unknown[] {
  const out: unknown[] = [segment.name, segment.toString(), segment.fields.length];
  const width = segment.fields.length + 2;
  for (let f = -1; f <= width; f++) {
    const field = segment.getField(f) as medplum.Hl7Field | Hl7Field | undefined;
    out.push(['getField', f, field?.toString()]);
    out.push(['get', f, segment.get(f)?.toString()]);
    if (!field || f < 0) continue;
    out.push(['repetitions', field.components.length]);
    for (let r = 0; r < field.components.length; r++) {
      const components = field.components[r].length;
      for (let c = 0; c <= components + 1; c++) {
        out.push(['getComponent', f, c, r, segment.getComponent(f, c, undefined, r)]);
        out.push(['field.getComponent', c, r, field.getComponent(c, undefined, r)]);
        out.push(['field.get', c, r, field.get(c, undefined, r)]);
        for (let s = 0; s <= 3; s++) {
          out.push(['subcomponent', f, c, s, r, segment.getComponent(f, c, s, r)]);
        }
      }
    }
  }
  return out;
}

/** Medplum's reads, with the values decoded as Graphir's are. */
function decodedReads(segment: medplum.Hl7Segment, context: Hl7Context): unknown[] {
  return reads(segment).map((read) => {
    if (!Array.isArray(read)) return read;
    const [kind] = read;
    const value = read[read.length - 1];
    const decodes = String(kind).includes('omponent') || kind === 'field.get';
    return decodes && typeof value === 'string'
      ? [...read.slice(0, -1), decodeEscapes(value, context)]
      : read;
  });
}

describe.each(Object.entries(MESSAGES))('%s reads as with Medplum', (_name, text) => {
  const ours = Hl7Message.parse(text);
  const theirs = medplum.Hl7Message.parse(text);

  it('the message', () => {
    const shape = (m: medplum.Hl7Message | Hl7Message) => [
      m.toString(),
      m.segments.length,
      m.header.name,
      m.segments.map((s) => s.name),
      [-1, 0, 1, 2, 99, 1.5].map((i) => m.getSegment(i)?.toString()),
      [-1, 0, 1, 99].map((i) => m.get(i)?.toString()),
      ['MSH', 'PID', 'OBX', 'EVN', 'ZZZ', ''].map((n) => [
        m.getSegment(n)?.toString(),
        m.get(n)?.toString(),
        m.getAllSegments(n).map(String),
        m.getAll(n).length,
      ]),
      m.getAckType(),
    ];
    expect(shape(ours)).toStrictEqual(shape(theirs));
  });

  it('the context', () => {
    const { context } = theirs;
    expect([
      ours.context.segmentSeparator,
      ours.context.fieldSeparator,
      ours.context.componentSeparator,
      ours.context.repetitionSeparator,
      ours.context.escapeCharacter,
      ours.context.subcomponentSeparator,
      ours.context.getMsh1(),
      ours.context.getMsh2(),
    ]).toStrictEqual([
      context.segmentSeparator,
      context.fieldSeparator,
      context.componentSeparator,
      context.repetitionSeparator,
      context.escapeCharacter,
      context.subcomponentSeparator,
      context.getMsh1(),
      context.getMsh2(),
    ]);
  });

  it('every field, component, subcomponent and repetition', () => {
    ours.segments.forEach((segment, i) => {
      expect(reads(segment), `${segment.name} (${i})`).toStrictEqual(
        decodedReads(theirs.segments[i], ours.context),
      );
    });
  });

  it('the ACK, but for its timestamp and control id', () => {
    for (const options of [undefined, { ackCode: 'AE' as const }, { ackCode: 'CR' as const }]) {
      const mine = ours.buildAck(options);
      const medplums = theirs.buildAck(options);
      const comparable = (m: medplum.Hl7Message | Hl7Message) =>
        m.segments.map((s) =>
          s.fields.map((f, at) => (s.name === 'MSH' && (at === 6 || at === 9) ? '' : String(f))),
        );
      const processingId = ours.header.getField(11)?.toString() || 'P';
      const separator = ours.context.componentSeparator;
      expect(comparable(mine)).toStrictEqual(
        comparable(medplums).map((fields, at) =>
          // Graphir keeps the original's processing id where Medplum writes P, and writes MSH-9
          // with the message's component separator where Medplum writes ^.
          at === 0
            ? fields.map((f, i) =>
                i === 10 ? processingId : i === 8 ? f.split('^').join(separator) : f,
              )
            : fields,
        ),
      );
      expect(mine.getAckType()).toBe(medplums.getAckType());
    }
  });
});

describe('edits as with Medplum', () => {
  const text = fixture('adt-a01');
  type Edit = (m: Hl7Message | medplum.Hl7Message) => unknown;
  const edits: [string, Edit][] = [
    ['setField past the end', (m) => m.getSegment('PID')?.setField(40, 'X^Y~Z')],
    ['setField on MSH-3', (m) => m.header.setField(3, 'APP^FAC')],
    ['setField on MSH-1', (m) => m.header.setField(1, '!')],
    ['setField on MSH-2', (m) => m.header.setField(2, '!!!!')],
    [
      'setField with a field',
      (m) => m.getSegment('EVN')?.setField(2, m.header.getField(7) as never),
    ],
    ['setComponent', (m) => m.getSegment('PID')?.setComponent(5, 2, 'Maria')],
    ['setComponent past the end', (m) => m.getSegment('PID')?.setComponent(5, 9, 'Jr')],
    ['setComponent on repetition 1', (m) => m.getSegment('PID')?.setComponent(3, 1, 'X', 0, 1)],
    ['setComponent adds a repetition', (m) => m.getSegment('PV1')?.setComponent(3, 2, 'R', 0, 2)],
    ['setComponent of a subcomponent', (m) => m.getSegment('PID')?.setComponent(3, 4, 'A', 1)],
    ['setComponent 0', (m) => m.getSegment('PID')?.setComponent(5, 0, 'x')],
    ['setComponent of an absent field', (m) => m.getSegment('PID')?.setComponent(60, 1, 'x')],
    ['field.setComponent', (m) => m.getSegment('PID')?.getField(5).setComponent(1, 'Roe')],
    ['field.setComponent subcomponent -1', (m) => m.header.getField(9).setComponent(1, 'x', -1)],
    ['setSegment at 1', (m) => m.setSegment(1, medplum.Hl7Segment.parse('ZZZ|1') as never)],
    ['setSegment appends', (m) => m.setSegment(99, medplum.Hl7Segment.parse('ZZZ|1') as never)],
    ['setSegment by name', (m) => m.setSegment('PV1', medplum.Hl7Segment.parse('PV1|2') as never)],
    [
      'setSegment of no name',
      (m) => m.setSegment('ZZZ', medplum.Hl7Segment.parse('ZZZ|1') as never),
    ],
    [
      'setSegment MSH at 1',
      (m) => m.setSegment(1, medplum.Hl7Segment.parse('MSH|^~\\&|X') as never),
    ],
    ['setSegment PID first', (m) => m.setSegment(0, medplum.Hl7Segment.parse('PID|1') as never)],
    [
      'setSegment MSH by name',
      (m) => m.setSegment('MSH', medplum.Hl7Segment.parse('MSH|^~\\&|X') as never),
    ],
  ];

  it.each(edits)('%s', (_name, edit) => {
    const ours = Hl7Message.parse(text);
    const theirs = medplum.Hl7Message.parse(text);
    // Our classes get our own segments; Medplum's its own.
    const own = (m: Hl7Message | medplum.Hl7Message) =>
      m instanceof Hl7Message
        ? new Proxy(m, {
            get: (target, key) =>
              key === 'setSegment'
                ? (index: number | string, segment: medplum.Hl7Segment) =>
                    target.setSegment(index, Hl7Segment.parse(segment.toString(), target.context))
                : Reflect.get(target, key, target),
          })
        : m;
    expect(edit(own(ours))).toBe(edit(theirs));
    expect(ours.toString()).toBe(theirs.toString());
  });
});

describe('classes made by hand, as with Medplum', () => {
  const cases: [string, (api: typeof medplum | Api) => unknown][] = [
    [
      'a default context',
      (api) => [new api.Hl7Context().getMsh1(), new api.Hl7Context().getMsh2()],
    ],
    [
      'a message of strings',
      (api) =>
        new api.Hl7Message(['MSH|^~\\&|A', 'PID|1||||Doe^Jane'])
          .getSegment('PID')
          ?.getComponent(5, 2),
    ],
    [
      'a segment of fields',
      (api) => {
        const segment = new api.Hl7Segment([
          'PID',
          '1',
          new api.Hl7Field([['Doe', 'Jane'], ['Roe']]) as never,
        ]);
        return [
          segment.name,
          segment.toString(),
          segment.getField(2).getComponent(1, undefined, 1),
        ];
      },
    ],
    ['a field parsed', (api) => api.Hl7Field.parse('a^b~c&d').getComponent(1, 1, 1)],
    [
      'an empty message has no header',
      (api) => {
        try {
          return new api.Hl7Message([]).header;
        } catch (error) {
          return (error as Error).message;
        }
      },
    ],
    ['a segment parsed', (api) => api.Hl7Segment.parse('OBX|1|NM').getField(2).toString()],
  ];
  type Api = {
    Hl7Context: typeof Hl7Context;
    Hl7Field: typeof Hl7Field;
    Hl7Message: typeof Hl7Message;
    Hl7Segment: typeof Hl7Segment;
  };
  const ours: Api = { Hl7Context, Hl7Field, Hl7Message, Hl7Segment };

  it.each(cases)('%s', (_name, make) => {
    expect(make(ours)).toStrictEqual(make(medplum));
  });
});
