/**
 * The `fhir` object a bot gets: a proxy (IsolateGlue.proxy) whose methods come from the client's
 * parts (isolate/fhir-core.ts and the modules below), each compiled on the first read of one of
 * its methods. Compiling the whole client took longer than an echo execution; most bots call a
 * read or a write, and compile only the core.
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from 'quickjs-emscripten';
import { isolateModule } from './isolate-bundle.js';
import { UNSUPPORTED_ASYNC, UNSUPPORTED_SYNC } from './isolate/fhir-unsupported.js';
import type { IsolateGlue } from './sandbox-glue.js';

interface Part {
  /** isolate/<module>.ts */
  readonly module: string;
  /** The module's export that makes the methods: `createFhirCore(host, Error, baseUrl)` for the core, `(core) => methods` for the others. */
  readonly factory: string;
  /** The methods it makes, space-separated (test/bots/fhir-parts.test.ts checks them). */
  readonly methods: string;
}

const CORE: Part = {
  module: 'fhir-core',
  factory: 'createFhirCore',
  methods:
    'readResource readReference createResource createResourceIfNoneExist updateResource patchResource deleteResource',
};

export const FHIR_CLIENT_PARTS: readonly Part[] = [
  CORE,
  {
    module: 'fhir-requests',
    factory: 'requestMethods',
    methods:
      'getBaseUrl readHistory readVersion executeBatch graphql executeBot get post put patch delete invalidateUrl invalidateAll invalidateSearches clear getCached getCachedReference isLoading getInitPromise',
  },
  {
    module: 'fhir-search',
    factory: 'searchMethods',
    methods:
      'fhirUrl fhirSearchUrl readCanonical search searchOne searchResources searchResourcePages upsertResource',
  },
  { module: 'fhir-binary', factory: 'binaryMethods', methods: 'createBinary download' },
  {
    module: 'fhir-unsupported',
    factory: 'unsupportedMethods',
    methods: `${UNSUPPORTED_ASYNC} ${UNSUPPORTED_SYNC}`,
  },
];

const PART_OF = new Map(
  FHIR_CLIENT_PARTS.flatMap((part) => part.methods.split(' ').map((name) => [name, part])),
);

/** How the isolate runs code: the value, or a throw (the time or memory limit among them). */
export interface Evaluator {
  evaluate(source: string, filename: string): QuickJSHandle;
  check(result: VmCallResult<QuickJSHandle>): QuickJSHandle;
  /** Makes ready what the client's code reads (the web platform's globals) before it loads. */
  beforeClient(): void;
}

export class FhirClientParts {
  /** The core's `FhirCore`, which the other parts are made with. */
  private core: QuickJSHandle | undefined;
  /** Each compiled part's methods object. */
  private readonly made = new Map<Part, QuickJSHandle>();

  /** `host` and `baseUrl`: the isolate host object and the execution's base URL, once it runs. */
  constructor(
    private readonly vm: QuickJSContext,
    private readonly glue: IsolateGlue,
    private readonly evaluator: Evaluator,
    private readonly host: () => QuickJSHandle,
    private readonly baseUrl: () => string,
  ) {}

  has(name: string): boolean {
    return PART_OF.has(name);
  }

  /** The method `name`, its part compiled now if not yet; undefined for any other name. */
  get(name: string): QuickJSHandle {
    const part = PART_OF.get(name);
    return part ? this.glue.read(this.methodsOf(part), name) : this.vm.undefined;
  }

  dispose(): void {
    this.core?.dispose();
    for (const methods of this.made.values()) methods.dispose();
    this.core = undefined;
    this.made.clear();
  }

  private methodsOf(part: Part): QuickJSHandle {
    let methods = this.made.get(part);
    if (methods) return methods;
    const { glue } = this;
    if (!this.core) {
      this.evaluator.beforeClient();
      using baseUrl = this.vm.newString(this.baseUrl());
      using made = this.call(CORE, [this.host(), glue.errorType, baseUrl]);
      this.core = glue.read(made, 'core');
      this.made.set(CORE, glue.read(made, 'methods'));
    }
    if (part !== CORE) this.made.set(part, this.call(part, [this.core]));
    return this.made.get(part)!;
  }

  private call(part: Part, args: QuickJSHandle[]): QuickJSHandle {
    const { vm, evaluator } = this;
    const source = `${isolateModule(part.module)}.${part.factory}`;
    using factory = evaluator.evaluate(source, `${part.module}.js`);
    return evaluator.check(vm.callFunction(factory, vm.undefined, ...args));
  }
}
