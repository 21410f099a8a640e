/**
 * What ends a bot's run other than its answer — an error it threw, its time or memory limit, a
 * broken sandbox — as the outcome the worker reports.
 */
import { NoHandlerError } from './sandbox-glue.js';
import type { WorkerOutcome } from './sandbox-types.js';

export class Failure extends Error {
  constructor(
    readonly status: 'error' | 'timeout' | 'memory',
    message: string = status,
    /** The bot's own stack, as botStackOf made it (not this Error's own `stack`, the worker's). */
    readonly botStack?: string,
  ) {
    super(message);
  }
}

/**
 * At most this many frames of a thrown error's stack, and characters of them, are kept: a stack
 * overflow's stack has thousands, and the stack travels to the main thread, into the response
 * and the AuditEvent.
 */
const STACK_FRAMES = 40;
const STACK_CHARS = 8192;

/** The most each QuickJS module's WebAssembly memory may grow to, when bounded. */
const memoryMaximums = new WeakMap<object, number>();

/** Says how far `memory`, the WebAssembly memory of a QuickJS module, may grow. */
export function noteMemoryMaximum(memory: object, bytes: number): void {
  memoryMaximums.set(memory, bytes);
}

/** Whether `memory` is within `reserve` bytes of the maximum it may grow to. */
export function wasmMemoryNearMaximum(memory: object, reserve: number): boolean {
  const maximum = memoryMaximums.get(memory);
  const { buffer } = memory as { buffer: ArrayBuffer };
  return maximum !== undefined && buffer.byteLength + reserve >= maximum;
}

/**
 * A value the bot's code threw (dumped from the isolate) as a Failure. `nearMemoryLimit` tells
 * whether a thrown `null` means memory ran out: QuickJS throws it when it cannot even allocate
 * the out-of-memory error.
 */
export function failureOfThrown(
  thrown: unknown,
  filename: string | undefined,
  nearMemoryLimit: () => boolean,
): Failure {
  const { name, message, stack } = describe(thrown);
  if (name === 'InternalError' && /out of memory/i.test(message)) return new Failure('memory');
  if (thrown === null && nearMemoryLimit()) return new Failure('memory');
  const botStack = botStackOf(name, message, stack);
  if (name === 'SyntaxError' && filename !== undefined) {
    const where = /\(([^()\n]*)\)|at (\S+)/.exec(stack)?.slice(1).find(Boolean);
    return new Failure('error', `Syntax error in ${where ?? filename}: ${message}`, botStack);
  }
  return new Failure('error', message, botStack);
}

/**
 * A thrown error's stack as V8 writes one — `Name: message` and then QuickJS's frames,
 * `    at handler (bot.mjs:12:7)` (line and column from 1) — with at most STACK_FRAMES frames;
 * undefined when the thrown value has no frames (a string, a plain object).
 */
function botStackOf(name: string | undefined, message: string, stack: string): string | undefined {
  const frames = stack.split('\n').filter((line) => line.trim());
  if (frames.length === 0) return undefined;
  const kept = frames.slice(0, STACK_FRAMES);
  if (frames.length > kept.length) kept.push(`    … ${frames.length - kept.length} more frames`);
  const text = `${name ?? 'Error'}: ${message}\n${kept.join('\n')}`;
  return text.length > STACK_CHARS ? `${text.slice(0, STACK_CHARS)}…` : text;
}

/** The outcome of a run that ended with `error`, once neither limit explains it. */
export function outcomeOfError(error: unknown, console: string): WorkerOutcome {
  if (error instanceof NoHandlerError) return { status: 'error', message: error.message, console };
  if (!(error instanceof Failure)) {
    const message = error instanceof Error ? error.message : String(error);
    // V8's own stack limit, hit inside QuickJS before QuickJS's (the worker then retires).
    if (error instanceof RangeError) return { status: 'error', message, console };
    return { status: 'error', message: `The sandbox failed: ${message}`, console };
  }
  if (error.status !== 'error') return { status: error.status, console };
  const { message, botStack } = error;
  return botStack === undefined
    ? { status: 'error', message, console }
    : { status: 'error', message, stack: botStack, console };
}

function describe(thrown: unknown): { name?: string; message: string; stack: string } {
  if (thrown && typeof thrown === 'object' && 'message' in thrown) {
    const { name, message, stack } = thrown as Record<string, unknown>;
    return {
      name: typeof name === 'string' ? name : undefined,
      message: String(message),
      stack: typeof stack === 'string' ? stack : '',
    };
  }
  if (typeof thrown === 'string') return { message: thrown, stack: '' };
  let message: string;
  try {
    message = JSON.stringify(thrown) ?? String(thrown);
  } catch {
    message = String(thrown);
  }
  return { message, stack: '' };
}
