/**
 * Date's and Number's toLocale…String with Node's results: QuickJS's own ignore the locales and
 * options (zero-padded US dates, no grouping). Prototypes cannot be lazy globals, so every
 * isolate gets these methods; they only forward to the Intl group (isolate/web-intl.ts), which
 * loads on their first call, or to QuickJS's own where the global `Intl` is not that group's.
 * Made from the worker: a script doing the same cost a fifth of an echo bot's preparation.
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';
import type { IsolateGlue } from './sandbox-glue.js';
import { TO_LOCALE_KEY } from './isolate/web-intl.js';

const METHODS = {
  Date: ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString'],
  Number: ['toLocaleString'],
} as const;

/** Replaces the methods; returns QuickJS's own, which the caller frees with the isolate. */
export function installLocaleMethods(vm: QuickJSContext, glue: IsolateGlue): QuickJSHandle[] {
  const originals: QuickJSHandle[] = [];
  for (const [type, names] of Object.entries(METHODS)) {
    using constructor = vm.getProp(vm.global, type);
    using prototype = vm.getProp(constructor, 'prototype');
    for (const name of names) {
      const own = vm.getProp(prototype, name);
      originals.push(own);
      // `Intl[Symbol.for(TO_LOCALE_KEY)](this, name, locales, options)`, read at each call.
      using method = vm.newFunction(name, function (this: QuickJSHandle, locales, options) {
        using intl = glue.read(vm.global, 'Intl');
        using key = vm.newSymbolFor(TO_LOCALE_KEY);
        using toLocale = vm.typeof(intl) === 'object' ? vm.getProp(intl, key) : vm.undefined;
        if (vm.typeof(toLocale) !== 'function') return vm.callFunction(own, this);
        using methodName = vm.newString(name);
        const rest = [locales ?? vm.undefined, options ?? vm.undefined];
        return vm.callFunction(toLocale, intl, this, methodName, ...rest);
      });
      // An assignment keeps the built-in's attributes: writable, configurable, not enumerable.
      vm.setProp(prototype, name, method);
    }
  }
  return originals;
}
