/**
 * `graphir bot deploy <file> --identifier system|value [--name n]`: creates or updates the Bot
 * with that identifier in the caller's project; prints its id.
 * `graphir bot execute (<id> | --identifier system|value) [--input file|-] [--get key=value…]`:
 * prints the response body.
 */
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { Argv } from 'yargs';
import { connectionOf, withConnection } from './options.js';
import { CliError, ServerClient, describeFailure, isOk } from './server-client.js';

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
              describe: 'JavaScript source of the bot',
            })
            .option('identifier', {
              type: 'string',
              demandOption: true,
              describe: 'system|value naming the bot in the project',
            })
            .option('name', { type: 'string', describe: 'Bot.name (default: the file name)' }),
        async (argv) => {
          const code = await readText(argv.file);
          const client = await ServerClient.connect(connectionOf(argv));
          const identifier = parseIdentifier(argv.identifier);
          const fallbackName = basename(argv.file, extname(argv.file));
          console.log(await deployBot(client, code, identifier, argv.name, fallbackName));
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
          if (!isOk(reply)) throw new CliError(`bot execution failed: ${describeFailure(reply)}`);
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

/** Search `Bot?identifier=…`, then PUT the match or POST a new Bot; its id. */
export async function deployBot(
  client: ServerClient,
  code: string,
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
    });
    return updated?.id ?? existing.id;
  }
  const created = await client.fhirJson('POST', 'Bot', {
    resourceType: 'Bot',
    name: name ?? fallbackName,
    identifier: [identifier],
    code,
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
