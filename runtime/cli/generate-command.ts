/**
 * `graphir generate [--check]`: spec/ → generated/, as `npm run generate`. The generator needs
 * ts-morph and prettier, development dependencies, so it is loaded only here.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Argv } from 'yargs';
import { CliError } from './server-client.js';

interface GeneratedFile {
  readonly path: string;
}
interface GeneratorModules {
  generate(specDir: string): GeneratedFile[];
  writeGenerated(
    outDir: string,
    files: GeneratedFile[],
    options: { check: boolean },
  ): Promise<{ written: number; stale: string[] }>;
}

export function generateCommand<T>(yargs: Argv<T>) {
  return yargs.command(
    'generate',
    'Generate generated/ from spec/ (needs a source checkout with dev dependencies)',
    (y) =>
      y
        .option('check', {
          type: 'boolean',
          default: false,
          describe: 'Compare instead of writing; exit 1 if stale',
        })
        .option('spec', { type: 'string', default: 'spec', describe: 'Folder of FHIR definitions' })
        .option('out', { type: 'string', default: 'generated', describe: 'Folder to write' }),
    async (argv) => {
      const { generate, writeGenerated } = await loadGenerator();
      const started = performance.now();
      const files = generate(argv.spec);
      const result = await writeGenerated(argv.out, files, { check: argv.check });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (argv.check && result.stale.length > 0) {
        for (const path of result.stale.slice(0, 50)) console.error(`  ${argv.out}/${path}`);
        if (result.stale.length > 50) console.error(`  … and ${result.stale.length - 50} more`);
        throw new CliError(
          `${argv.out}/ is stale: ${result.stale.length} file(s) differ from what ${argv.spec}/ generates; run \`graphir generate\``,
        );
      }
      console.log(
        argv.check
          ? `${argv.out}/ is up to date (${files.length} files, ${seconds} s)`
          : `wrote ${result.written} of ${files.length} files to ${argv.out}/ in ${seconds} s`,
      );
    },
  );
}

/**
 * The generator's modules, beside this file's source (`runtime/cli` → `generator/`).
 * The specifiers are computed so that the build of `runtime/` does not pull the generator in.
 */
async function loadGenerator(): Promise<GeneratorModules> {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const generateUrl = new URL(`../../generator/generate.${ext}`, import.meta.url);
  const writeUrl = new URL(`../../generator/write.${ext}`, import.meta.url);
  if (!existsSync(fileURLToPath(generateUrl)) || !existsSync(fileURLToPath(writeUrl)))
    throw new CliError(
      'the generator is not part of this installation: run `graphir generate` (or `npm run generate`) from a source checkout',
    );
  try {
    const [generateModule, writeModule] = await Promise.all([
      import(generateUrl.href),
      import(writeUrl.href),
    ]);
    return {
      generate: generateModule.generate,
      writeGenerated: writeModule.writeGenerated,
    } as GeneratorModules;
  } catch (error) {
    const code = (error as { code?: string }).code;
    const missing = /Cannot find (?:package|module) '([^']+)'/.exec((error as Error).message)?.[1];
    if (code === 'ERR_MODULE_NOT_FOUND' && missing)
      throw new CliError(
        `the generator needs the development dependency "${missing}" (ts-morph, prettier): run \`npm install\` in the source checkout`,
      );
    if (code === 'ERR_UNKNOWN_FILE_EXTENSION')
      throw new CliError(
        'the generator is TypeScript: run it through tsx (`npm run graphir -- generate`)',
      );
    throw error;
  }
}
