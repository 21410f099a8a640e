/** `graphir client create --project <id> --name <n> --scope <s>`: a client of a project. */
import type { Argv } from 'yargs';
import { connectionOf, withConnection } from './options.js';
import { ServerClient } from './server-client.js';

export function clientCommand<T>(yargs: Argv<T>) {
  return yargs.command('client', 'Manage OAuth clients of a project', (y) =>
    y
      .command(
        'create',
        'Create a client; prints {clientId, clientSecret}',
        (c) =>
          withConnection(c)
            .option('project', { type: 'string', demandOption: true, describe: 'Project id' })
            .option('name', { type: 'string', demandOption: true, describe: 'Client name' })
            .option('scope', {
              type: 'string',
              demandOption: true,
              describe:
                "SMART scopes, e.g. 'system/Patient.rs system/Bot.r system/Bot.$execute' (runs bots)",
            }),
        async (argv) => {
          const client = await ServerClient.connect(connectionOf(argv));
          const created = await client.adminJson(
            'POST',
            `/admin/projects/${encodeURIComponent(argv.project)}/clients`,
            { name: argv.name, scope: argv.scope },
          );
          console.log(JSON.stringify(created, null, 2));
        },
      )
      .demandCommand(1, 'name a client subcommand: create'),
  );
}
