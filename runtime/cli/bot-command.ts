/**
 * `graphir bot deploy <file> --identifier system|value [--name n] [--minify]`: bundles the file
 * (TypeScript or JavaScript, with its imports) and creates or updates the Bot with that
 * identifier in the caller's project, with the bundle's source map; prints its id (stdout) and
 * the bundle's size (stderr).
 * `graphir bot execute (<id> | --identifier system|value) [--input file|-] [--get key=value…]`:
 * prints the response body.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { Argv } from 'yargs';
import { BotBundleError, bundleBot, type BotBundle } from './bot-bundle.js';
import { connectionOf, withConnection } from './options.js';
import { CliError, ServerClient, describeFailure, isOk, type Reply } from './server-client.js';

export function botCommand<T>(yargs: Argv<T>) {
  return yargs.command('bot', 'Deploy and execute bots', (y) =>
    y
      .command(
        'deploy <file>',
        'Create or update the Bot with an identifier; prints its id',
        (c) =>
          withConnection(c)
            .positional('file', {
              type: 'string',
              demandOption: true,
              describe: 'The bot: TypeScript or JavaScript, bundled with its imports',
            })
            .option('identifier', {
              type: 'string',
              demandOption: true,
              describe: 'system|value naming the bot in the project',
            })
            .option('name', { type: 'string', describe: 'Bot.name (default: the file name)' })
            .option('minify', {
              type: 'boolean',
              default: false,
              describe: 'Minify the bundle (stack frames then name minified functions)',
            }),
        async (argv) => {
          const identifier = parseIdentifier(argv.identifier);
          const bundle = await bundleFile(argv.file, argv.minify);
          const client = await ServerClient.connect(connectionOf(argv));
          const fallbackName = basename(argv.file, extname(argv.file));
          console.log(await deployBot(client, bundle, identifier, argv.name, fallbackName));
        },
      )
      .command(
        'execute [id]',
        'Execute a bot; prints the response body',
        (c) =>
          withConnection(c)
            .positional('id', { type: 'string', describe: 'Bot id' })
            .option('identifier', { type: 'string', describe: 'system|value naming the bot' })
            .option('input', {
              type: 'string',
              describe: 'File whose content is POSTed as input, or - for stdin',
            })
            .option('content-type', {
              type: 'string',
              default: 'application/json',
              describe: 'Content-Type of the input',
            })
            .option('get', {
              type: 'string',
              array: true,
              describe:
                'Query parameters (key=value…) of a GET; without --input the bot is called by GET',
            })
            .conflicts('get', 'input')
            .check((argv) => {
              if (Boolean(argv.id) === Boolean(argv.identifier))
                throw new Error('name the bot by <id> or by --identifier, not both or neither');
              return true;
            }),
        async (argv) => {
          const client = await ServerClient.connect(connectionOf(argv));
          const params = new URLSearchParams();
          if (argv.identifier) params.set('identifier', argv.identifier);
          for (const pair of argv.get ?? []) {
            const at = pair.indexOf('=');
            if (at <= 0) throw new CliError(`--get takes key=value, not "${pair}"`);
            params.append(pair.slice(0, at), pair.slice(at + 1));
          }
          const path = `Bot/${argv.id ? `${encodeURIComponent(argv.id)}/` : ''}$execute`;
          const query = params.size ? `?${params}` : '';
          const reply =
            argv.input === undefined
              ? await client.fhir('GET', `${path}${query}`)
              : await client.fhir('POST', `${path}${query}`, await readText(argv.input), {
                  'Content-Type': argv.contentType,
                });
          if (!isOk(reply)) {
            throw new CliError(`bot execution failed: ${describeFailure(withoutStack(reply))}`);
          }
          process.stdout.write(reply.text.endsWith('\n') ? reply.text : `${reply.text}\n`);
        },
      )
      .demandCommand(1, 'name a bot subcommand: deploy or execute'),
  );
}

export interface Identifier {
  readonly system?: string;
  readonly value: string;
}

export function parseIdentifier(text: string): Identifier {
  const at = text.indexOf('|');
  const identifier =
    at < 0 ? { value: text } : { system: text.slice(0, at), value: text.slice(at + 1) };
  if (!identifier.value) throw new CliError(`--identifier takes system|value, not "${text}"`);
  return identifier.system ? identifier : { value: identifier.value };
}

/**
 * The file bundled, its size and esbuild's warnings on stderr; a file that does not bundle is a
 * CliError with esbuild's errors, before anything reaches the server.
 */
async function bundleFile(file: string, minify: boolean): Promise<BotBundle> {
  try {
    await stat(file);
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let bundle: BotBundle;
  try {
    bundle = await bundleBot(file, { minify });
  } catch (error) {
    if (error instanceof BotBundleError)
      throw new CliError(`cannot bundle ${file}: ${error.message}`);
    throw error;
  }
  for (const warning of bundle.warnings) process.stderr.write(`graphir: warning: ${warning}\n`);
  const size = (text: string) => formatBytes(Buffer.byteLength(text));
  process.stderr.write(
    `bundled ${file} → ${size(bundle.code)} (source map ${size(bundle.sourceMap)})\n`,
  );
  return bundle;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A failed execution's OperationOutcome without the issue holding the bot's stack
 * (runtime/http/bot-routes.ts): the command reports a failure in one line.
 */
function withoutStack(reply: Reply): Reply {
  let outcome: { resourceType?: unknown; issue?: { severity?: unknown }[] };
  try {
    outcome = JSON.parse(reply.text);
  } catch {
    return reply;
  }
  if (outcome?.resourceType !== 'OperationOutcome' || !Array.isArray(outcome.issue)) return reply;
  const issue = outcome.issue.filter((entry) => entry?.severity !== 'information');
  return issue.length === 0 ? reply : { ...reply, text: JSON.stringify({ ...outcome, issue }) };
}

/**
 * Search `Bot?identifier=…`, then PUT the match or POST a new Bot, with the bundle's code and
 * source map; its id.
 */
export async function deployBot(
  client: ServerClient,
  { code, sourceMap }: Pick<BotBundle, 'code' | 'sourceMap'>,
  identifier: Identifier,
  name: string | undefined,
  fallbackName: string,
): Promise<string> {
  const token = identifier.system ? `${identifier.system}|${identifier.value}` : identifier.value;
  const found = await client.fhirJson(
    'GET',
    `Bot?${new URLSearchParams({ identifier: token, _count: '2' })}`,
  );
  const matches = ((found?.entry ?? []) as { resource?: any; search?: { mode?: string } }[])
    .filter((entry) => entry.resource?.resourceType === 'Bot' && entry.search?.mode !== 'include')
    .map((entry) => entry.resource);
  if (matches.length > 1) throw new CliError(`more than one Bot has the identifier ${token}`);
  const existing = matches[0];
  if (existing) {
    const updated = await client.fhirJson('PUT', `Bot/${encodeURIComponent(existing.id)}`, {
      ...existing,
      name: name ?? existing.name ?? fallbackName,
      code,
      sourceMap,
    });
    return updated?.id ?? existing.id;
  }
  const created = await client.fhirJson('POST', 'Bot', {
    resourceType: 'Bot',
    name: name ?? fallbackName,
    identifier: [identifier],
    code,
    sourceMap,
  });
  if (!created?.id) throw new CliError('the server did not answer with the new Bot');
  return created.id;
}

async function readText(file: string): Promise<string> {
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    }
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
}
