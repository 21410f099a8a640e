#!/usr/bin/env node
/**
 * The `graphir` command: serve, generate, project/client/token administration, bots, import and
 * export. Run `graphir <command> --help` for each command's options. Failures are one line on
 * stderr and a non-zero exit code.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { botCommand } from './bot-command.js';
import { clientCommand } from './client-command.js';
import { exportCommand } from './export-command.js';
import { generateCommand } from './generate-command.js';
import { importCommand } from './import-command.js';
import { projectCommand } from './project-command.js';
import { serveCommand } from './serve-command.js';
import { tokenCommand } from './token-command.js';
import { CliError } from './server-client.js';

// yargs reads a lone `-` as a positional; `--input -` means stdin.
const args = hideBin(process.argv).flatMap((arg, index, all) =>
  arg === '-' && all[index - 1] === '--input'
    ? []
    : arg === '--input' && all[index + 1] === '-'
      ? ['--input=-']
      : [arg],
);

let cli = yargs(args)
  .scriptName('graphir')
  .usage('$0 <command> [options]')
  .strict()
  .demandCommand(1, 'name a command (see graphir --help)')
  .help()
  .alias('help', 'h')
  .version(false)
  .wrap(Math.min(110, process.stdout.columns || 100))
  .fail((message, error) => {
    // Usage mistakes; errors thrown by handlers reach the catch below.
    if (error) throw error;
    throw new CliError(`${message} (see --help)`);
  });
cli = serveCommand(cli);
cli = generateCommand(cli);
cli = projectCommand(cli);
cli = clientCommand(cli);
cli = tokenCommand(cli);
cli = botCommand(cli);
cli = importCommand(cli);
cli = exportCommand(cli);

try {
  await cli.parseAsync();
} catch (error) {
  const message =
    error instanceof CliError
      ? error.message
      : String((error as Error)?.message ?? error).replace(/(?<!\s)\s*[\r\n]\s*/g, ' ');
  process.stderr.write(`graphir: ${message}\n`);
  process.exitCode = 1;
}
