/**
 * Checks run both with a GraphirClient and, inside a bot, with the sandbox's `fhir` client.
 * They are plain JavaScript source, so the very same text is evaluated with `new Function` in
 * Node and embedded in a bot's code. `tag` keeps each run's data apart (searches use prefixes, so
 * each check uses a family name no other one starts with).
 */
export const SHARED_CHECKS_SOURCE = String.raw`(function () {
  const assert = (condition, message) => {
    if (!condition) throw new Error('check failed: ' + message);
  };
  const patient = (family, extra) =>
    Object.assign({ resourceType: 'Patient', name: [{ family: family }] }, extra || {});
  return [
    ['createResource and readResource', async (fhir, tag) => {
      const created = await fhir.createResource(patient(tag + '-read', { active: true }));
      assert(typeof created.id === 'string' && created.id !== '', 'created has an id');
      assert(created.meta && created.meta.versionId, 'created has meta.versionId');
      const read = await fhir.readResource('Patient', created.id);
      assert(read.id === created.id, 'read the same id');
      assert(read.name[0].family === tag + '-read', 'read the same name');
      assert(read.active === true, 'read active');
    }],
    ['readResource of a missing resource throws an OperationOutcome', async (fhir, tag) => {
      let failed = false;
      try {
        await fhir.readResource('Patient', 'missing-' + tag);
      } catch (error) {
        failed = true;
        assert(error.outcome && error.outcome.resourceType === 'OperationOutcome', 'outcome');
      }
      assert(failed, 'reading a missing resource throws');
    }],
    ['searchResources with an object and a string query', async (fhir, tag) => {
      await fhir.createResource(patient(tag + '-search', { gender: 'male' }));
      await fhir.createResource(patient(tag + '-search', { gender: 'female' }));
      const all = await fhir.searchResources('Patient', { family: tag + '-search' });
      assert(all.length === 2, 'two matches, got ' + all.length);
      assert(all.every((p) => p.resourceType === 'Patient'), 'resources, not entries');
      const male = await fhir.searchResources(
        'Patient',
        'family=' + encodeURIComponent(tag + '-search') + '&gender=male',
      );
      assert(male.length === 1 && male[0].gender === 'male', 'one male match');
      const none = await fhir.searchResources('Patient', { family: tag + '-nobody' });
      assert(Array.isArray(none) && none.length === 0, 'no match is an empty array');
    }],
    ['searchOne', async (fhir, tag) => {
      const created = await fhir.createResource(patient(tag + '-one'));
      const found = await fhir.searchOne('Patient', { family: tag + '-one' });
      assert(found && found.id === created.id, 'found the one');
      const none = await fhir.searchOne('Patient', { family: tag + '-none' });
      assert(none == null, 'nothing found');
    }],
    ['updateResource', async (fhir, tag) => {
      const created = await fhir.createResource(patient(tag + '-update', { active: true }));
      const updated = await fhir.updateResource(Object.assign({}, created, { active: false }));
      assert(updated.id === created.id, 'same id');
      assert(updated.active === false, 'changed');
      assert(updated.meta.versionId !== created.meta.versionId, 'new version');
      const read = await fhir.readResource('Patient', created.id);
      assert(read.active === false, 'stored');
    }],
    ['deleteResource', async (fhir, tag) => {
      const created = await fhir.createResource(patient(tag + '-delete'));
      await fhir.deleteResource('Patient', created.id);
      let failed = false;
      try {
        await fhir.readResource('Patient', created.id);
      } catch (error) {
        failed = true;
        assert(error.outcome && error.outcome.resourceType === 'OperationOutcome', 'outcome');
      }
      assert(failed, 'a deleted resource cannot be read');
      const left = await fhir.searchResources('Patient', { family: tag + '-delete' });
      assert(left.length === 0, 'a deleted resource is not found');
    }],
    ['graphql with data and variables', async (fhir, tag) => {
      const created = await fhir.createResource(patient(tag + '-graphql'));
      const result = await fhir.graphql(
        'query ($family: String) { PatientList(family: $family) { id name { family } } }',
        null,
        { family: tag + '-graphql' },
      );
      assert(!result.errors, 'no errors: ' + JSON.stringify(result.errors));
      assert(result.data.PatientList.length === 1, 'one patient');
      assert(result.data.PatientList[0].id === created.id, 'that patient');
      assert(result.data.PatientList[0].name[0].family === tag + '-graphql', 'its name');
    }],
  ];
})()`;

export type SharedCheck = readonly [
  name: string,
  check: (fhir: unknown, tag: string) => Promise<void>,
];

export function sharedChecks(): SharedCheck[] {
  return new Function(`return ${SHARED_CHECKS_SOURCE};`)() as SharedCheck[];
}

/** A bot that runs the shared checks against its own `fhir` and returns each one's result. */
export const SHARED_CHECKS_BOT = `const checks = ${SHARED_CHECKS_SOURCE};
export async function handler(fhir, event) {
  const results = [];
  for (const [name, check] of checks) {
    try {
      await check(fhir, event.input.tag);
      results.push({ name, ok: true });
    } catch (error) {
      results.push({ name, ok: false, message: String((error && error.message) || error) });
    }
  }
  return results;
}`;
