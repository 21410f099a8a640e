/**
 * A bot's stack frames, as QuickJS writes them (`    at handler (bot.mjs:12:7)`, line and column
 * from 1; the sandbox names a module's code bot.mjs, CommonJS code bot.js), shown at the place
 * in the bot's own files: through the Bot's `sourceMap` when its code is a bundle
 * (`graphir bot deploy`), as `    at handler (src/my-bot.ts:10:9)`. Runs on the main thread, only
 * for failed executions and console output that names the bot's code.
 */
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { commonJsWrapper } from './sandbox-helpers.js';

/** `bot.mjs:12:7` or `bot.js:12:7`, wherever it stands in the text. */
const POSITION = /\b(bot\.m?js):(\d+):(\d+)\b/g;

/**
 * CommonJS code runs inside a wrapper that begins on the code's first line: QuickJS counts that
 * line's columns from the wrapper's start.
 */
const WRAPPER_COLUMNS = commonJsWrapper('\u0000').indexOf('\u0000');

/** Parsed source maps by the caller's key (a Bot's version): a bot that fails often parses once. */
const CACHE_SIZE = 16;
const parsed = new Map<string, TraceMap | undefined>();

/**
 * `text` (a stack, a console output) with each position in the bot's code rewritten: through
 * `sourceMap` (the Bot's, v3 JSON) to its original file, line and column when the map knows it;
 * else as the position in the Bot's `code` (bot.js's first line without the wrapper). A
 * sourceMap that does not parse leaves the positions as in the code. `cacheKey` names this
 * sourceMap (e.g. the Bot's id and version): its parse is kept for the next failure.
 */
export function mapBotStack(
  text: string,
  sourceMap: string | undefined,
  cacheKey?: string,
): string {
  if (!text.includes('bot.')) return text;
  const map = sourceMap ? traceMapOf(sourceMap, cacheKey) : undefined;
  return text.replace(POSITION, (whole, file: string, lineText: string, columnText: string) => {
    const line = Number(lineText);
    let column = Number(columnText);
    if (file === 'bot.js' && line === 1) column = Math.max(1, column - WRAPPER_COLUMNS);
    if (map) {
      const original = originalPositionFor(map, { line, column: column - 1 });
      if (original.source !== null) {
        return `${original.source}:${original.line}:${original.column + 1}`;
      }
    }
    return column === Number(columnText) ? whole : `${file}:${line}:${column}`;
  });
}

function traceMapOf(sourceMap: string, cacheKey: string | undefined): TraceMap | undefined {
  if (cacheKey !== undefined && parsed.has(cacheKey)) {
    const map = parsed.get(cacheKey);
    // Most recently used last.
    parsed.delete(cacheKey);
    parsed.set(cacheKey, map);
    return map;
  }
  let map: TraceMap | undefined;
  try {
    map = new TraceMap(sourceMap);
  } catch {
    // Not a source map (stored by hand): the positions stay those of the code.
    map = undefined;
  }
  if (cacheKey !== undefined) {
    parsed.set(cacheKey, map);
    if (parsed.size > CACHE_SIZE) parsed.delete(parsed.keys().next().value!);
  }
  return map;
}
