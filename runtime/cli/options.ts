/** Options shared by the commands that talk to a running server. */
import type { Argv } from 'yargs';
import type { Connection } from './server-client.js';

export function withConnection<T>(yargs: Argv<T>, env: NodeJS.ProcessEnv = process.env) {
  return yargs
    .option('url', {
      type: 'string',
      default: env.GRAPHIR_URL || 'http://localhost:8080',
      defaultDescription: '$GRAPHIR_URL or http://localhost:8080',
      describe: 'Server root URL',
    })
    .option('client-id', {
      type: 'string',
      default: env.GRAPHIR_CLIENT_ID || undefined,
      defaultDescription: '$GRAPHIR_CLIENT_ID',
      describe: 'OAuth client id',
    })
    .option('client-secret', {
      type: 'string',
      default: env.GRAPHIR_CLIENT_SECRET || undefined,
      defaultDescription: '$GRAPHIR_CLIENT_SECRET',
      describe: 'OAuth client secret',
    });
}

export function connectionOf(argv: {
  url: string;
  clientId?: string;
  clientSecret?: string;
}): Connection {
  return { url: argv.url, clientId: argv.clientId, clientSecret: argv.clientSecret };
}
