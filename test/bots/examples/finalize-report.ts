// A report finaliser: a DiagnosticReport in; each result Observation read through its reference,
// made final, and the report made final once all are. Medplum's examples do the same with
// readReference.
import type { BotEvent, MedplumClient } from '@medplum/core';
import type { DiagnosticReport, Observation } from '@medplum/fhirtypes';

export async function handler(
  medplum: MedplumClient,
  event: BotEvent<DiagnosticReport>,
): Promise<DiagnosticReport> {
  const report = await medplum.readResource('DiagnosticReport', event.input.id as string);
  for (const reference of report.result ?? []) {
    const observation: Observation = await medplum.readReference(reference);
    if (observation.status !== 'final') {
      await medplum.updateResource({ ...observation, status: 'final' });
    }
  }
  return medplum.updateResource({ ...report, status: 'final' });
}
