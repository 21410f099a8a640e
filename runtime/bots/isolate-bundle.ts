/**
 * Code that runs inside the sandbox's isolates as JavaScript (the `fhir` client, the web
 * platform, the HL7 classes) is written as modules under `isolate/`, with npm imports where a
 * well-kept library does the job, and bundled here with esbuild into one expression: QuickJS has
 * no module loader for them, and each isolate evaluates the text afresh. Bundled once per thread,
 * on first use.
 */
import { buildSync } from 'esbuild';
import { fileURLToPath } from 'node:url';

const FROM_SOURCE = import.meta.url.endsWith('.ts');
const bundles = new Map<string, string>();

/**
 * `isolate/<name>` bundled as an expression whose value is the module's exports: ES2020,
 * platform-neutral, minified, in a function that reaches nothing outside the isolate.
 */
export function isolateModule(name: string): string {
  let bundle = bundles.get(name);
  if (bundle === undefined) {
    const entry = fileURLToPath(
      new URL(`./isolate/${name}.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url),
    );
    const built = buildSync({
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['browser', 'module', 'main'],
      target: 'es2020',
      // Class fields as assignments in the constructor: ES2022's definitions, lowered to ES2020,
      // become a defineProperty call per field and instance, which QuickJS runs slowly.
      tsconfigRaw: { compilerOptions: { useDefineForClassFields: false } },
      minify: true,
      legalComments: 'none',
      logLevel: 'silent',
    });
    bundle = `(() => {${returningExports(built.outputFiles[0].text)}})()`;
    bundles.set(name, bundle);
  }
  return bundle;
}

/**
 * An ES module bundle's code with its one export clause, which esbuild writes last
 * (`export{a as b,c};`), made a return of the exports. esbuild's own IIFE format adds helpers to
 * build a namespace object (about 600 bytes a module), which every isolate would compile.
 */
function returningExports(code: string): string {
  // Anchored at the `export` before the last `{` (bindings hold none): one attempt, where an
  // unanchored search backtracked quadratically.
  const start = code.lastIndexOf('export', code.lastIndexOf('{'));
  const clause = start < 0 ? null : /^export\s*\{([^}]*)\};?\s*$/.exec(code.slice(start));
  if (!clause) throw new Error('An isolate module must export something');
  const exported = clause[1].split(',').map((binding) => {
    const [local, , name = local] = binding.trim().split(/\s+/);
    return `${JSON.stringify(name)}:${local}`;
  });
  return `${code.slice(0, start)}\nreturn {${exported.join(',')}};`;
}
