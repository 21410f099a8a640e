/**
 * A bot's `console`: each call one line of its arguments as the glue shows them, and the output
 * as the caller stores it — the last `capChars` characters' worth of whole lines (each line
 * already truncated), with a note of how many earlier lines were dropped.
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from 'quickjs-emscripten';
import type { IsolateGlue } from './sandbox-glue.js';
import { SHOWN_CHARS } from './sandbox-helpers.js';

export const CONSOLE_CAP_CHARS = 64 * 1024;
export const CONSOLE_LINE_CHARS = 8 * 1024;

export class ConsoleTail {
  private lines: string[] = [];
  private head = 0;
  private size = 0;
  private dropped = 0;

  constructor(private readonly capChars = CONSOLE_CAP_CHARS) {}

  push(text: string): void {
    const line =
      text.length > CONSOLE_LINE_CHARS ? `${text.slice(0, CONSOLE_LINE_CHARS)}… (truncated)` : text;
    this.lines.push(line);
    this.size += line.length + 1;
    while (this.size > this.capChars && this.head < this.lines.length - 1) {
      this.size -= this.lines[this.head].length + 1;
      this.lines[this.head++] = '';
      this.dropped++;
    }
    if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }

  text(): string {
    const kept = this.lines.slice(this.head).join('\n');
    return this.dropped > 0 ? `… (${this.dropped} earlier lines dropped)\n${kept}` : kept;
  }
}

/** The console's methods and the prefix of their lines. */
const CONSOLE_METHODS = { log: '', info: '', debug: '', warn: 'WARN ', error: 'ERROR ' } as const;

/** Defines `console` in the isolate, writing to `tail`. */
export function installConsole(vm: QuickJSContext, glue: IsolateGlue, tail: ConsoleTail): void {
  using consoleApi = vm.newObject();
  for (const [name, prefix] of Object.entries(CONSOLE_METHODS)) {
    using log = vm.newFunction(name, (...args) => consoleLine(vm, glue, tail, prefix, args));
    vm.setProp(consoleApi, name, log);
  }
  vm.setProp(vm.global, 'console', consoleApi);
}

/**
 * `console.<method>(…args)`: one line of the arguments as the glue shows them, cut at
 * SHOWN_CHARS characters; arguments past that are not read at all.
 */
function consoleLine(
  vm: QuickJSContext,
  glue: IsolateGlue,
  tail: ConsoleTail,
  prefix: string,
  args: readonly QuickJSHandle[],
): VmCallResult<QuickJSHandle> | undefined {
  let line = prefix;
  for (const [index, arg] of args.entries()) {
    if (line.length > SHOWN_CHARS) break;
    const shown = glue.show(arg);
    // Only the time or memory limit gets through show's catch: it ends the bot.
    if (shown.error) return shown;
    line += (index > 0 ? ' ' : '') + vm.getString(shown.value);
    shown.value.dispose();
  }
  tail.push(line.length > SHOWN_CHARS ? `${line.slice(0, SHOWN_CHARS)}… (truncated)` : line);
  return undefined;
}
