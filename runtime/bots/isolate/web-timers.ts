/**
 * setTimeout, setInterval, their clear functions and queueMicrotask, on the worker's timers
 * (sandbox-timers.ts): a callback runs in the isolate when due, within the bot's deadline.
 * Ids are numbers, as in browsers.
 */
import type { IsolateHost } from './isolate-host.js';

type Callback = (...args: unknown[]) => unknown;

export function timerGlobals(host: IsolateHost) {
  const schedule = (callback: Callback, delay: unknown, args: unknown[], repeat: boolean) => {
    if (typeof callback !== 'function') {
      throw new TypeError('The "callback" argument must be of type function');
    }
    return host.setTimer(() => callback(...args), Number(delay), repeat);
  };
  const clear = (id: unknown) => {
    if (typeof id === 'number') host.clearTimer(id);
  };
  return {
    setTimeout: (callback: Callback, delay?: number, ...args: unknown[]) =>
      schedule(callback, delay, args, false),
    setInterval: (callback: Callback, delay?: number, ...args: unknown[]) =>
      schedule(callback, delay, args, true),
    clearTimeout: clear,
    clearInterval: clear,
    queueMicrotask: (callback: () => void) => {
      if (typeof callback !== 'function') {
        throw new TypeError('The "callback" argument must be of type function');
      }
      void Promise.resolve().then(() => callback());
    },
  };
}
