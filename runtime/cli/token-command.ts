/** `graphir token`: prints an access token for the client credentials. */
import type { Argv } from 'yargs';
import { connectionOf, withConnection } from './options.js';
import { fetchToken } from './server-client.js';

export function tokenCommand<T>(yargs: Argv<T>) {
  return yargs.command(
    'token',
    'Print an access token for the client credentials',
    (y) =>
      withConnection(y).option('scope', {
        type: 'string',
        describe: 'Ask for fewer scopes than the client has',
      }),
    async (argv) => {
      console.log(await fetchToken({ ...connectionOf(argv), scope: argv.scope }));
    },
  );
}
