// A bot that runs another: every Patient with a given family name is greeted by the hello-patient
// bot (executeBot by identifier), and the greetings are returned.
import type { BotEvent, MedplumClient } from '@medplum/core';

export async function handler(
  medplum: MedplumClient,
  event: BotEvent<{ family: string }>,
): Promise<string[]> {
  const patients = await medplum.searchResources('Patient', { family: event.input.family });
  const greetings: string[] = [];
  for (const patient of patients) {
    greetings.push(
      await medplum.executeBot(
        { system: 'urn:example:bots', value: 'hello-patient' },
        patient,
        'application/fhir+json',
      ),
    );
  }
  return greetings;
}
