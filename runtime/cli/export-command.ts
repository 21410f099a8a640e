/**
 * `graphir export --out <dir> [--types Patient,Observation]`: one NDJSON file per resource type
 * (`Patient.ndjson`), paging through search with `_count` and `_offset`. Without `--types`, every
 * type the CapabilityStatement lists; types the client may not search are then skipped.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import { connectionOf, withConnection } from './options.js';
import { CliError, ServerClient, describeFailure, isOk } from './server-client.js';

const PAGE_SIZE = 1000;

export function exportCommand<T>(yargs: Argv<T>) {
  return yargs.command(
    'export',
    'Export resources as NDJSON, one file per type',
    (y) =>
      withConnection(y)
        .option('out', { type: 'string', demandOption: true, describe: 'Folder to write' })
        .option('types', {
          type: 'string',
          describe: 'Comma-separated resource types (default: every type with resources)',
        }),
    async (argv) => {
      const client = await ServerClient.connect(connectionOf(argv));
      const explicit = argv.types
        ?.split(',')
        .map((type) => type.trim())
        .filter(Boolean);
      const types = explicit?.length ? explicit : await allTypes(client);
      await mkdir(argv.out, { recursive: true }).catch((error: Error) => {
        throw new CliError(`cannot create ${argv.out}: ${error.message}`);
      });
      const started = performance.now();
      let total = 0;
      for (const type of types) {
        if (!/^[A-Z][A-Za-z]*$/.test(type)) throw new CliError(`not a resource type: "${type}"`);
        const count = await exportType(client, type, argv.out, !explicit?.length);
        if (count > 0) console.error(`${type}: ${count}`);
        total += count;
      }
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `exported ${total} resources to ${argv.out}/ in ${seconds.toFixed(1)} s (${Math.round(total / Math.max(seconds, 0.001))}/s)`,
      );
    },
  );
}

async function allTypes(client: ServerClient): Promise<string[]> {
  const metadata = await client.fhirJson('GET', 'metadata');
  const resources = (metadata?.rest?.[0]?.resource ?? []) as { type?: string }[];
  return resources.map((resource) => resource.type).filter((type): type is string => !!type);
}

/** Writes `<out>/<type>.ndjson` when the type has resources; how many. */
async function exportType(
  client: ServerClient,
  type: string,
  out: string,
  skipForbidden: boolean,
): Promise<number> {
  let offset = 0;
  let stream: ReturnType<typeof createWriteStream> | undefined;
  try {
    for (;;) {
      const query = new URLSearchParams({ _count: String(PAGE_SIZE), _offset: String(offset) });
      const reply = await client.fhir('GET', `${type}?${query}`);
      if (!isOk(reply)) {
        if (skipForbidden && offset === 0 && (reply.status === 403 || reply.status === 404))
          return 0;
        throw new CliError(`exporting ${type} failed: ${describeFailure(reply)}`);
      }
      const bundle = JSON.parse(reply.text) as {
        entry?: { resource?: unknown; search?: { mode?: string } }[];
        link?: { relation?: string }[];
      };
      const resources = (bundle.entry ?? [])
        .filter((entry) => entry.resource && entry.search?.mode !== 'include')
        .map((entry) => entry.resource);
      if (resources.length === 0) break;
      stream ??= createWriteStream(join(out, `${type}.ndjson`));
      for (const resource of resources) {
        if (!stream.write(`${JSON.stringify(resource)}\n`)) await once(stream, 'drain');
      }
      offset += resources.length;
      if (!bundle.link?.some((link) => link.relation === 'next')) break;
    }
  } finally {
    if (stream) {
      stream.end();
      await once(stream, 'finish');
    }
  }
  return offset;
}
