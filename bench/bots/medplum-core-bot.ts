// bench:bots' bot that bundles @medplum/core as Medplum's bots do: its client class (imported as
// a value, as `import { BotEvent, MedplumClient } from '@medplum/core'` keeps it) and helpers.
import {
  MedplumClient,
  calculateAgeString,
  formatHumanName,
  getReferenceString,
} from '@medplum/core';
import type { BotEvent } from '@medplum/core';
import type { Patient } from '@medplum/fhirtypes';

export async function handler(
  _medplum: MedplumClient,
  event: BotEvent<Patient>,
): Promise<{ reference?: string; name: string; age?: string }> {
  const patient = event.input;
  return {
    reference: getReferenceString(patient),
    name: patient.name?.[0] ? formatHumanName(patient.name[0]) : '',
    age: patient.birthDate ? calculateAgeString(patient.birthDate) : undefined,
  };
}
