/**
 * The bot's `fhir` client is compiled in parts (runtime/bots/sandbox-fhir.ts), each on the first
 * read of one of its methods: the worker finds a method's part in a list of names, which must be
 * exactly what each part's module makes, and name each method once.
 */
import { newQuickJSWASMModuleFromVariant, RELEASE_SYNC } from 'quickjs-emscripten';
import { describe, expect, it } from 'vitest';
import { isolateModule } from '../../runtime/bots/isolate-bundle.js';
import { FHIR_CLIENT_PARTS } from '../../runtime/bots/sandbox-fhir.js';

describe('the fhir client’s parts', () => {
  it('list exactly the methods each part makes, each in one part', async () => {
    const quickjs = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
    const vm = quickjs.newContext();
    const host = '{ call: () => Promise.resolve(null) }';
    const core = `${isolateModule('fhir-core')}.createFhirCore(${host}, Error, 'http://x/')`;
    const keysOf = (expression: string) => {
      using keys = vm.unwrapResult(vm.evalCode(expression));
      return vm.dump(keys);
    };
    for (const part of FHIR_CLIENT_PARTS) {
      const made =
        part.module === 'fhir-core'
          ? `${core}.methods`
          : `${isolateModule(part.module)}.${part.factory}(${core}.core)`;
      const keys = keysOf(`Object.keys(${made}).sort()`);
      expect(keys, part.module).toEqual(part.methods.split(' ').sort());
    }
    vm.dispose();
    const names = FHIR_CLIENT_PARTS.flatMap((part) => part.methods.split(' '));
    expect(new Set(names).size).toBe(names.length);
  });
});
