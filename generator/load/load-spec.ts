import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { SearchParameter, Spec, StructureDefinition } from './spec-types.js';

interface Resource {
  readonly resourceType?: string;
  readonly entry?: readonly { readonly resource?: Resource }[];
}

/**
 * Reads every `*.json` file below `specDir` (sorted by path, so the result does not depend on the
 * file system's order). A file holds one StructureDefinition or SearchParameter, or a Bundle of them;
 * anything else in a Bundle (OperationDefinition, CapabilityStatement…) is skipped. Files are named
 * relative to the working directory, with `/` separators (`spec/hl7-r4/profiles-types.json`), so
 * that generated headers name no absolute path and read the same on every system.
 */
export function loadSpec(specDir: string): Spec {
  const structureDefinitions: StructureDefinition[] = [];
  const searchParameters: SearchParameter[] = [];
  const files = new Map<StructureDefinition | SearchParameter, string>();
  for (const file of listJsonFiles(specDir)) {
    const name = relative(process.cwd(), file).split(sep).join('/');
    const parsed = parseJson(file, name);
    const resources =
      parsed.resourceType === 'Bundle' ? (parsed.entry ?? []).map((e) => e.resource) : [parsed];
    for (const resource of resources) {
      if (resource?.resourceType === 'StructureDefinition') {
        structureDefinitions.push(resource as unknown as StructureDefinition);
        files.set(resource as unknown as StructureDefinition, name);
      } else if (resource?.resourceType === 'SearchParameter') {
        searchParameters.push(resource as unknown as SearchParameter);
        files.set(resource as unknown as SearchParameter, name);
      }
    }
  }
  return { structureDefinitions, searchParameters, files };
}

function listJsonFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => join(dir, name));
}

function parseJson(file: string, name: string): Resource {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Resource;
  } catch (error) {
    throw new Error(`${name} is not valid JSON: ${(error as Error).message}`);
  }
}
