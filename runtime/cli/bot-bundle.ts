/**
 * A bot's source — TypeScript or JavaScript, with its local and npm imports — bundled by esbuild
 * into the one ES module a Bot's `code` holds, and its source map, which the server uses to show
 * an uncaught error's stack at the bot's own files and lines (runtime/bots/source-map-stack.ts).
 *
 * The bundle runs in a QuickJS isolate: nothing is external (the isolate has no module loader),
 * packages resolve to their browser and ES module builds (the isolate has the web platform, not
 * Node's modules: an import of `fs` fails here, at deploy, with esbuild's message), and the
 * syntax is ES2022, which QuickJS runs as it is. Types are stripped, not checked: run `tsc`.
 */
import { build, type Message } from 'esbuild';
import { resolve } from 'node:path';

export interface BotBundleOptions {
  /** Minify the code (smaller to store, quicker to parse; frames then name minified functions). */
  readonly minify?: boolean;
  /** Where paths are resolved from and the source map's file names are relative to. */
  readonly cwd?: string;
}

export interface BotBundle {
  /** An ES module: what the Bot's `code` holds. */
  readonly code: string;
  /** Its source map (v3 JSON), with the sources' text of the bot's own files. */
  readonly sourceMap: string;
  /** esbuild's warnings, one line each (`file:line:column: text`). */
  readonly warnings: readonly string[];
}

/** The source does not bundle: esbuild's errors, one line each. */
export class BotBundleError extends Error {
  constructor(readonly errors: readonly string[]) {
    super(errors.join('; '));
    this.name = 'BotBundleError';
  }
}

/**
 * The name the sandbox gives a module's code in stack frames (runtime/bots/sandbox-isolate.ts):
 * the source map's `file`.
 */
const BUNDLE_FILE = 'bot.mjs';
/**
 * The sandbox runs code as a module when a line starts with `export` or `import`
 * (runtime/bots/sandbox-helpers.ts); minified output has its `export{…}` mid-line, so the bundle
 * begins with an empty export of its own.
 */
const MODULE_BANNER = 'export {};';

export async function bundleBot(entry: string, options: BotBundleOptions = {}): Promise<BotBundle> {
  const cwd = resolve(options.cwd ?? process.cwd());
  let result;
  try {
    result = await build({
      entryPoints: [resolve(cwd, entry)],
      absWorkingDir: cwd,
      // The output's name places the source map's paths: relative to `cwd`, as the user typed.
      outfile: resolve(cwd, BUNDLE_FILE),
      write: false,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      mainFields: ['browser', 'module', 'main'],
      conditions: ['browser', 'module'],
      // Libraries that test for production builds; the isolate has no `process`.
      define: { 'process.env.NODE_ENV': '"production"' },
      banner: { js: MODULE_BANNER },
      sourcemap: 'external',
      sourcesContent: true,
      minify: options.minify ?? false,
      logLevel: 'silent',
    });
  } catch (error) {
    const failure = error as { errors?: Message[] };
    if (!Array.isArray(failure.errors)) throw error;
    throw new BotBundleError(failure.errors.map(describeMessage));
  }
  const code = result.outputFiles.find((file) => file.path.endsWith(BUNDLE_FILE))?.text;
  const map = result.outputFiles.find((file) => file.path.endsWith(`${BUNDLE_FILE}.map`))?.text;
  if (code === undefined || map === undefined) throw new Error('esbuild wrote no bundle');
  return {
    code: withoutMapComment(code),
    sourceMap: withOwnSourcesOnly(map),
    warnings: result.warnings.map(describeMessage),
  };
}

/**
 * The source map keeps the text of the bot's own files, not of its packages': the map is stored
 * in the Bot and read with it for every execution, and a bot importing @medplum/core would
 * otherwise carry its 1.1 MB of sources (from the package's own source map, which esbuild
 * follows). Frames in packages still map to their files and lines.
 */
function withOwnSourcesOnly(mapText: string): string {
  const map = JSON.parse(mapText) as { sources: string[]; sourcesContent?: (string | null)[] };
  map.sourcesContent = map.sourcesContent?.map((content, index) =>
    /(^|\/)node_modules\//.test(map.sources[index]) ? null : content,
  );
  return JSON.stringify(map);
}

/** esbuild's `//# sourceMappingURL=bot.mjs.map`: the map is in the Bot, not at a URL. */
function withoutMapComment(code: string): string {
  return code.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
}

/**
 * `src/bot.ts:3:9: Expected ";" but found "b"` (the column from 1); an import of one of Node's
 * modules says why it cannot be had (esbuild's own note suggests bundling for Node).
 */
function describeMessage(message: Message): string {
  const where = message.location
    ? `${message.location.file}:${message.location.line}:${message.location.column + 1}: `
    : '';
  const nodeModule = message.notes.some((note) => /built into node/i.test(note.text));
  return `${where}${message.text}${nodeModule ? " (one of Node's modules: bots run in a sandbox without them)" : ''}`;
}
