// An account set-up: an organisation and its practitioners in; the Organization made once
// (createResourceIfNoneExist, by its NPI), then every Practitioner and PractitionerRole in one
// transaction (executeBatch), each Practitioner made only if no other has its NPI.
import type { BotEvent, MedplumClient } from '@medplum/core';
import type { Bundle, BundleEntry, Organization } from '@medplum/fhirtypes';

const NPI = 'http://hl7.org/fhir/sid/us-npi';

interface AccountInput {
  organization: { name: string; npi: string };
  practitioners: { family: string; given: string; npi: string; role: string }[];
}

export async function handler(
  medplum: MedplumClient,
  event: BotEvent<AccountInput>,
): Promise<{ organization: string; created: number; existing: number }> {
  const { organization, practitioners } = event.input;
  const org: Organization = await medplum.createResourceIfNoneExist(
    {
      resourceType: 'Organization',
      name: organization.name,
      identifier: [{ system: NPI, value: organization.npi }],
    },
    `identifier=${NPI}|${organization.npi}`,
  );
  const entries: BundleEntry[] = practitioners.flatMap((practitioner, index) => {
    const fullUrl = `urn:uuid:00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
    return [
      {
        fullUrl,
        resource: {
          resourceType: 'Practitioner',
          identifier: [{ system: NPI, value: practitioner.npi }],
          name: [{ family: practitioner.family, given: [practitioner.given] }],
        },
        request: {
          method: 'POST',
          url: 'Practitioner',
          ifNoneExist: `identifier=${NPI}|${practitioner.npi}`,
        },
      },
      {
        resource: {
          resourceType: 'PractitionerRole',
          practitioner: { reference: fullUrl },
          organization: { reference: `Organization/${org.id}` },
          code: [{ text: practitioner.role }],
        },
        request: { method: 'POST', url: 'PractitionerRole' },
      },
    ] as BundleEntry[];
  });
  const response: Bundle = await medplum.executeBatch({
    resourceType: 'Bundle',
    type: 'transaction',
    entry: entries,
  });
  const statuses = (response.entry ?? [])
    .filter((_, index) => index % 2 === 0)
    .map((entry) => entry.response?.status ?? '');
  return {
    organization: `Organization/${org.id}`,
    created: statuses.filter((status) => status.startsWith('201')).length,
    existing: statuses.filter((status) => status.startsWith('200')).length,
  };
}
