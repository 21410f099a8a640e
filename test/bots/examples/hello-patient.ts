// The shape of Medplum's examples/medplum-demo-bots/src/hello-patient.ts: a Patient in, a greeting
// logged, and (our addition) the greeting kept as a Communication about the Patient.
import type { BotEvent, MedplumClient } from '@medplum/core';
import type { Communication, Patient } from '@medplum/fhirtypes';

export async function handler(medplum: MedplumClient, event: BotEvent<Patient>): Promise<string> {
  const patient = event.input;
  const firstName = patient.name?.[0]?.given?.[0];
  const lastName = patient.name?.[0]?.family;
  const greeting = `Hello ${firstName} ${lastName}!`;
  console.log(greeting);
  const communication: Communication = {
    resourceType: 'Communication',
    status: 'completed',
    subject: { reference: `Patient/${patient.id}` },
    payload: [{ contentString: greeting }],
  };
  await medplum.createResource(communication);
  return greeting;
}
