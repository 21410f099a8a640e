// A BMI calculator that bundles @medplum/core's helpers: the latest height and weight of a
// Patient in, a BMI Observation out, with the Patient's age as Medplum formats it.
import { calculateAgeString, createReference, getReferenceString } from '@medplum/core';
import type { BotEvent, MedplumClient } from '@medplum/core';
import type { Observation, Patient, Reference } from '@medplum/fhirtypes';

const LOINC = 'http://loinc.org';

export async function handler(
  medplum: MedplumClient,
  event: BotEvent<Reference<Patient>>,
): Promise<{ bmi: number; observation?: string; age?: string }> {
  const patient = await medplum.readReference(event.input);
  const subject = getReferenceString(patient);
  const latest = (code: string) =>
    medplum.searchOne('Observation', { subject, code: `${LOINC}|${code}`, _sort: '-date' });
  const height = await latest('8302-2');
  const weight = await latest('29463-7');
  if (!height?.valueQuantity?.value || !weight?.valueQuantity?.value) {
    throw new Error(`${subject} has no height or weight`);
  }
  const metres = height.valueQuantity.value / 100;
  const bmi = Math.round((weight.valueQuantity.value / (metres * metres)) * 10) / 10;
  const observation: Observation = await medplum.createResource({
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: LOINC, code: '39156-5', display: 'Body mass index' }] },
    subject: createReference(patient),
    derivedFrom: [createReference(height), createReference(weight)],
    valueQuantity: {
      value: bmi,
      unit: 'kg/m2',
      system: 'http://unitsofmeasure.org',
      code: 'kg/m2',
    },
  });
  return {
    bmi,
    observation: getReferenceString(observation),
    age: patient.birthDate ? calculateAgeString(patient.birthDate) : undefined,
  };
}
