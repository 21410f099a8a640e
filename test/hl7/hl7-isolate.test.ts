/**
 * The HL7 classes as bots get them: bundled by isolateModule('hl7') and evaluated in QuickJS,
 * where they behave as in Node (the same ER7, numbering and escapes).
 */
import { readFileSync } from 'node:fs';
import { getQuickJS } from 'quickjs-emscripten';
import { describe, expect, it } from 'vitest';
import { isolateModule } from '../../runtime/bots/isolate-bundle.js';
import { Hl7Message } from '../../runtime/hl7/index.js';

const ORU = readFileSync(new URL('../fixtures/hl7/oru-r01.hl7', import.meta.url), 'utf8');

/** What a bot does with a message, in any realm: the same script in Node and in QuickJS. */
const PROBE = `(classes, text) => {
  const { Hl7Message, Hl7Segment, Hl7Field, Hl7Context } = classes;
  const message = Hl7Message.parse(text);
  const pid = message.getSegment('PID');
  pid.setComponent(5, 2, 'A|B');
  const ack = message.buildAck({ ackCode: 'AE', text: 'x^y' });
  return [
    message.toString(),
    message.header.getField(9).getComponent(2),
    pid.getField(5).getComponent(1),
    pid.getComponent(5, 2),
    message.getSegment('OBR').getComponent(15, 4, 1),
    message.getSegment('NTE').getComponent(3, 1),
    message.getAllSegments('OBX').length,
    message.get('OBX').getField(5).toString(),
    ack.header.getField(9).toString(),
    ack.getSegment('MSA').toString(),
    ack.getAckType(),
    new Hl7Segment(['ZZZ', '1', new Hl7Field([['a', 'b']])], new Hl7Context()).toString(),
    message instanceof Hl7Message,
  ];
}`;

describe('the HL7 classes in an isolate', () => {
  it('give the same answers in QuickJS as in Node', async () => {
    const quickjs = await getQuickJS();
    const inQuickJs = quickjs.evalCode(
      `JSON.stringify((${PROBE})(${isolateModule('hl7')}, ${JSON.stringify(ORU)}))`,
    );
    const inNode = (new Function(`return ${PROBE}`)() as (c: unknown, t: string) => unknown[])(
      { ...(await import('../../runtime/hl7/index.js')) },
      ORU,
    );
    expect(JSON.parse(inQuickJs as string)).toStrictEqual(inNode);
    expect(inNode[0]).toContain(String.raw`O'Brien^A\F\B^Anne`);
  });

  it('are a bundle of their own, small enough to compile ahead', () => {
    const bundle = isolateModule('hl7');
    expect(bundle).not.toMatch(/\bimport\b|\brequire\(/);
    // Big enough to hold the four classes; an accidental dependency would show here.
    expect(bundle.length).toBeGreaterThan(2_000);
    expect(bundle.length).toBeLessThan(12_000);
  });

  it('are not the server classes', () => {
    const classes = new Function(`return ${isolateModule('hl7')}`)() as { Hl7Message: unknown };
    expect(classes.Hl7Message).not.toBe(Hl7Message);
    expect(Object.keys(classes).sort()).toStrictEqual([
      'Hl7Context',
      'Hl7Field',
      'Hl7Message',
      'Hl7Segment',
    ]);
  });
});
