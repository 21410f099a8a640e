/** `graphir project create <name>`: a new project and its first client (root credentials). */
import type { Argv } from 'yargs';
import { connectionOf, withConnection } from './options.js';
import { ServerClient } from './server-client.js';

export function projectCommand<T>(yargs: Argv<T>) {
  return yargs.command('project', 'Manage projects (root credentials)', (y) =>
    y
      .command(
        'create <name>',
        'Create a project; prints {projectId, clientId, clientSecret}',
        (c) =>
          withConnection(c).positional('name', {
            type: 'string',
            demandOption: true,
            describe: 'Project name',
          }),
        async (argv) => {
          const client = await ServerClient.connect(connectionOf(argv));
          const created = await client.adminJson('POST', '/admin/projects', { name: argv.name });
          console.log(JSON.stringify(created, null, 2));
        },
      )
      .demandCommand(1, 'name a project subcommand: create'),
  );
}
