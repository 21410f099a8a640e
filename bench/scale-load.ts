/**
 * Loading for `npm run bench:scale`: transaction Bundles of scale-dataset.ts posted to the server,
 * each with the token of its project, several in flight as a bulk loader sends them.
 */
import { projectBundles, type ProjectBundle } from './scale-dataset.js';

/** Bundles in flight at once. */
export const IN_FLIGHT = 4;

export interface LoadTarget {
  readonly url: string;
  /** A token of each project, by project index. */
  readonly tokens: readonly string[];
}

/**
 * Loads at least `resources` resources, patients `next.patient` onwards, and moves `next` past
 * them; the resources sent (every one is created, or the Bundle's failure throws).
 */
export async function loadResources(
  target: LoadTarget,
  resources: number,
  next: { patient: number },
): Promise<number> {
  const bundles = projectBundles(next.patient, resources, next);
  let sent = 0;
  // One generator shared by the workers: each takes the next Bundle when its last one is answered.
  const worker = async () => {
    for (let item = bundles.next(); !item.done; item = bundles.next()) {
      await post(target, item.value);
      sent += item.value.bundle.entry.length;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return sent;
}

async function post(target: LoadTarget, { project, bundle }: ProjectBundle): Promise<void> {
  const response = await fetch(`${target.url}/fhir/R4/`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${target.tokens[project]}`,
      'Content-Type': 'application/fhir+json',
    },
    body: JSON.stringify(bundle),
  });
  if (response.status !== 200)
    throw new Error(`loading failed: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}
