/**
 *   npm run generate          spec/ → generated/
 *   npm run generate:check    fails, listing stale files, when generated/ does not match spec/
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { generate } from './generate.js';
import { writeGenerated } from './write.js';

const argv = await yargs(hideBin(process.argv))
  .scriptName('generate')
  .command('generate', 'Generate generated/ from spec/')
  .option('check', {
    type: 'boolean',
    default: false,
    describe: 'Compare instead of writing; exit 1 if stale',
  })
  .option('spec', { type: 'string', default: 'spec', describe: 'Folder of FHIR definitions' })
  .option('out', { type: 'string', default: 'generated', describe: 'Folder to write' })
  .demandCommand(1)
  .strict()
  .help()
  .parseAsync();

const started = performance.now();
const files = generate(argv.spec);
const result = await writeGenerated(argv.out, files, { check: argv.check });
const seconds = ((performance.now() - started) / 1000).toFixed(1);

if (argv.check && result.stale.length > 0) {
  console.error(
    `${argv.out}/ is stale: ${result.stale.length} file(s) differ from what spec/ generates:`,
  );
  for (const path of result.stale.slice(0, 50)) console.error(`  ${argv.out}/${path}`);
  if (result.stale.length > 50) console.error(`  … and ${result.stale.length - 50} more`);
  console.error('Run `npm run generate` and commit the result.');
  process.exit(1);
}
console.log(
  argv.check
    ? `${argv.out}/ is up to date (${files.length} files, ${seconds} s)`
    : `wrote ${result.written} of ${files.length} files to ${argv.out}/ in ${seconds} s`,
);
