// An ADT feed, as Medplum's HL7 examples write one: an ADT^A01/A04/A08 message in, the Patient
// upserted by its medical record number, an ACK out. Other messages are acknowledged untouched.
import type { BotEvent, Hl7Field, Hl7Message, MedplumClient } from '@medplum/core';
import type { Patient } from '@medplum/fhirtypes';

const MRN_SYSTEM = 'urn:example:st-marys:mrn';
const HANDLED = new Set(['A01', 'A04', 'A08']);

export async function handler(
  medplum: MedplumClient,
  event: BotEvent<Hl7Message>,
): Promise<Hl7Message> {
  const input = event.input;
  const messageType = input.getSegment('MSH')?.getField(9)?.getComponent(1);
  const trigger = input.getSegment('MSH')?.getField(9)?.getComponent(2);
  if (messageType !== 'ADT' || !HANDLED.has(trigger ?? '')) return input.buildAck();

  const pid = input.getSegment('PID');
  if (!pid) throw new Error('ADT message without a PID segment');
  const mrn = medicalRecordNumber(pid.getField(3));
  if (!mrn) throw new Error('PID-3 holds no medical record number (MR)');

  const name = pid.getField(5);
  const address = pid.getField(11);
  const patient: Patient = {
    resourceType: 'Patient',
    identifier: [{ system: MRN_SYSTEM, value: mrn }],
    name: [
      {
        family: name.getComponent(1),
        given: [name.getComponent(2), name.getComponent(3)].filter(Boolean),
      },
    ],
    birthDate: hl7Date(pid.getField(7).getComponent(1)),
    gender:
      ({ F: 'female', M: 'male', O: 'other' } as const)[pid.getField(8).getComponent(1)] ??
      'unknown',
    address: [
      {
        line: [address.getComponent(1)],
        city: address.getComponent(3),
        state: address.getComponent(4),
        postalCode: address.getComponent(5),
      },
    ],
  };
  const saved = await medplum.upsertResource(patient, { identifier: `${MRN_SYSTEM}|${mrn}` });
  console.log(`ADT^${trigger}: Patient/${saved.id} version ${saved.meta?.versionId}`);
  return input.buildAck();
}

/** PID-3 repeats: the repetition whose type (component 5) is MR. */
function medicalRecordNumber(field: Hl7Field): string | undefined {
  for (let repetition = 0; repetition < field.components.length; repetition++) {
    if (field.getComponent(5, undefined, repetition) === 'MR') {
      return field.getComponent(1, undefined, repetition);
    }
  }
  return undefined;
}

function hl7Date(value: string): string | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})/.exec(value);
  return match ? `${match[1]}-${match[2]}-${match[3]}` : undefined;
}
