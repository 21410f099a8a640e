/**
 * `graphir import <file|dir> [--resume]`: FHIR Bundles (`.json`) and NDJSON (`.ndjson`) into the
 * caller's project, in transaction Bundles of at most `--batch-size` entries.
 *
 * - A transaction or batch Bundle is sent as transaction Bundles of its entries, in order.
 * - A collection's entries become POSTs that keep their `fullUrl` (so `urn:uuid:` references
 *   between entries of one chunk are rewritten). A single resource is PUT (with an id) or POSTed.
 * - NDJSON is read as a stream, one resource per line: PUT when it has an id, else POST. When a
 *   chunk's transaction fails, it is sent again as a batch, so one bad line costs one resource.
 *
 * After each chunk, `<file>.graphir-import` records how many lines (NDJSON) or entries (Bundle)
 * are done; `--resume` continues after them.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Argv } from 'yargs';
import { connectionOf, withConnection } from './options.js';
import { CliError, ServerClient, describeFailure, isOk } from './server-client.js';

interface BundleEntry {
  fullUrl?: string;
  resource?: { resourceType?: string; id?: string; [key: string]: unknown };
  request?: { method: string; url: string; [key: string]: unknown };
}

export const STATE_SUFFIX = '.graphir-import';

export interface ImportState {
  /** NDJSON: lines read (blank and failed ones included); Bundle: entries sent. */
  readonly done: number;
  readonly complete: boolean;
}

export function importCommand<T>(yargs: Argv<T>) {
  return yargs.command(
    'import <path>',
    'Import FHIR Bundles (.json) and NDJSON (.ndjson) files, or a folder of them',
    (y) =>
      withConnection(y)
        .positional('path', {
          type: 'string',
          demandOption: true,
          describe: 'A .json or .ndjson file, or a folder holding such files',
        })
        .option('resume', {
          type: 'boolean',
          default: false,
          describe: `Continue after what <file>${STATE_SUFFIX} records as done`,
        })
        .option('batch-size', {
          type: 'number',
          default: 500,
          describe: 'Entries per transaction Bundle (at most 500)',
        }),
    async (argv) => {
      const batchSize = argv.batchSize;
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 500)
        throw new CliError('--batch-size must be a whole number from 1 to 500');
      const files = await filesToImport(argv.path);
      const client = await ServerClient.connect(connectionOf(argv));
      const progress = new Progress();
      for (const file of files) {
        const state = argv.resume ? await readState(file) : { done: 0, complete: false };
        if (state.complete) {
          console.error(`${file}: already imported (per ${file}${STATE_SUFFIX}); skipped`);
          continue;
        }
        if (state.done > 0) console.error(`${file}: resuming after ${state.done}`);
        const importer = new Importer(client, file, batchSize, progress);
        if (file.endsWith('.ndjson')) await importer.ndjson(state.done);
        else await importer.bundle(state.done);
      }
      progress.finish();
      const seconds = progress.seconds();
      console.log(
        `imported ${progress.imported} resources in ${seconds.toFixed(1)} s (${progress.rate()}/s), ${progress.failed} failures`,
      );
      if (progress.failed > 0) throw new CliError(`${progress.failed} resources were not imported`);
    },
  );
}

async function filesToImport(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new CliError(`no such file or folder: ${path}`);
  }
  if (!info.isDirectory()) {
    if (!/\.(ndjson|json)$/.test(path))
      throw new CliError(`${path}: only .json (Bundle) and .ndjson files can be imported`);
    return [path];
  }
  const names = (await readdir(path)).filter((name) => /\.(ndjson|json)$/.test(name)).sort();
  if (names.length === 0) throw new CliError(`${path} holds no .json or .ndjson files`);
  return names.map((name) => join(path, name));
}

export async function readState(file: string): Promise<ImportState> {
  let text: string;
  try {
    text = await readFile(file + STATE_SUFFIX, 'utf8');
  } catch {
    console.error(`${file}: no ${file}${STATE_SUFFIX} to resume from; starting at the beginning`);
    return { done: 0, complete: false };
  }
  const state = JSON.parse(text) as Partial<ImportState>;
  if (!Number.isInteger(state.done) || state.done! < 0)
    throw new CliError(`${file}${STATE_SUFFIX} is not an import state file`);
  return { done: state.done!, complete: state.complete === true };
}

function writeState(file: string, state: ImportState): Promise<void> {
  return writeFile(file + STATE_SUFFIX, `${JSON.stringify(state)}\n`);
}

class Progress {
  imported = 0;
  failed = 0;
  sent = 0;
  private readonly started = performance.now();
  private readonly tty = process.stderr.isTTY === true;

  seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  rate(): number {
    return Math.round(this.sent / Math.max(this.seconds(), 0.001));
  }

  report(): void {
    const line = `${this.sent} resources sent, ${this.rate()} resources/s, ${this.failed} failures`;
    process.stderr.write(this.tty ? `\r${line}` : `${line}\n`);
  }

  finish(): void {
    if (this.tty && this.sent > 0) process.stderr.write('\n');
  }
}

class Importer {
  private reportedFailures = 0;

  constructor(
    private readonly client: ServerClient,
    private readonly file: string,
    private readonly batchSize: number,
    private readonly progress: Progress,
  ) {}

  async ndjson(skip: number): Promise<void> {
    const lines = createInterface({
      input: createReadStream(this.file, 'utf8'),
      crlfDelay: Infinity,
    });
    let lineNumber = 0;
    let chunk: BundleEntry[] = [];
    try {
      for await (const line of lines) {
        lineNumber++;
        if (lineNumber <= skip || !line.trim()) continue;
        let resource: BundleEntry['resource'];
        try {
          resource = JSON.parse(line);
        } catch {
          this.fail(`line ${lineNumber}: not JSON`);
          continue;
        }
        if (!resource || typeof resource.resourceType !== 'string') {
          this.fail(`line ${lineNumber}: not a FHIR resource (no resourceType)`);
          continue;
        }
        chunk.push(entryFor(resource));
        if (chunk.length >= this.batchSize) {
          await this.send(chunk, true);
          chunk = [];
          await writeState(this.file, { done: lineNumber, complete: false });
        }
      }
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(`cannot read ${this.file}: ${(error as Error).message}`);
    }
    if (chunk.length > 0) await this.send(chunk, true);
    await writeState(this.file, { done: Math.max(lineNumber, skip), complete: true });
  }

  async bundle(skip: number): Promise<void> {
    let json: any;
    try {
      json = JSON.parse(await readFile(this.file, 'utf8'));
    } catch (error) {
      throw new CliError(`cannot read ${this.file} as JSON: ${(error as Error).message}`);
    }
    const entries = bundleEntries(this.file, json);
    for (let at = skip; at < entries.length; at += this.batchSize) {
      await this.send(entries.slice(at, at + this.batchSize), false);
      const done = Math.min(at + this.batchSize, entries.length);
      await writeState(this.file, { done, complete: done === entries.length });
    }
    if (entries.length <= skip) await writeState(this.file, { done: skip, complete: true });
  }

  /** One transaction; when it fails and `retryAsBatch`, the same entries as a batch. */
  private async send(entries: BundleEntry[], retryAsBatch: boolean): Promise<void> {
    const reply = await this.client.fhir(
      'POST',
      '',
      JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry: entries }),
      { Prefer: 'return=minimal' },
    );
    this.progress.sent += entries.length;
    if (isOk(reply)) {
      this.progress.imported += entries.length;
    } else if (!retryAsBatch) {
      this.fail(
        `${this.file}: a transaction of ${entries.length} entries failed: ${describeFailure(reply)}`,
        entries.length,
      );
    } else {
      const batch = await this.client.fhir(
        'POST',
        '',
        JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry: entries }),
        { Prefer: 'return=minimal' },
      );
      if (!isOk(batch)) {
        this.fail(
          `${this.file}: ${entries.length} entries failed: ${describeFailure(batch)}`,
          entries.length,
        );
      } else {
        const answers = (JSON.parse(batch.text).entry ?? []) as {
          response?: { status?: string; outcome?: unknown };
        }[];
        entries.forEach((entry, index) => {
          const status = answers[index]?.response?.status ?? '';
          if (/^2/.test(status)) {
            this.progress.imported++;
          } else {
            const outcome = answers[index]?.response?.outcome;
            const reason = outcome
              ? describeFailure({
                  status: Number.parseInt(status, 10) || 0,
                  contentType: '',
                  text: JSON.stringify(outcome),
                })
              : status || 'no response';
            this.fail(`${this.file}: ${entry.request?.method} ${entry.request?.url}: ${reason}`);
          }
        });
      }
    }
    this.progress.report();
  }

  private fail(message: string, count = 1): void {
    this.progress.failed += count;
    if (this.reportedFailures < 10) console.error(message);
    else if (this.reportedFailures === 10) console.error('(further failures are only counted)');
    this.reportedFailures++;
  }
}

function entryFor(resource: NonNullable<BundleEntry['resource']>): BundleEntry {
  const type = resource.resourceType!;
  return resource.id
    ? { resource, request: { method: 'PUT', url: `${type}/${encodeURIComponent(resource.id)}` } }
    : { resource, request: { method: 'POST', url: type } };
}

function bundleEntries(file: string, json: any): BundleEntry[] {
  if (!json || typeof json.resourceType !== 'string')
    throw new CliError(`${file} is not a FHIR resource (no resourceType)`);
  if (json.resourceType !== 'Bundle') return [entryFor(json)];
  const entries = (json.entry ?? []) as BundleEntry[];
  switch (json.type) {
    case 'transaction':
    case 'batch':
      entries.forEach((entry, index) => {
        if (!entry.request?.method || !entry.request.url)
          throw new CliError(`${file}: entry ${index} of the ${json.type} has no request`);
      });
      return entries;
    case 'collection':
      return entries
        .filter((entry) => entry.resource?.resourceType)
        .map((entry) => ({
          ...(entry.fullUrl ? { fullUrl: entry.fullUrl } : {}),
          resource: entry.resource,
          request: { method: 'POST', url: entry.resource!.resourceType! },
        }));
    default:
      throw new CliError(
        `${file}: a Bundle of type "${json.type}" cannot be imported (transaction, batch or collection)`,
      );
  }
}
