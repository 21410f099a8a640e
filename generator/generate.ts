import type { Emitter, GeneratedFile } from './emit/generated-file.js';
import { emitDefinitions } from './emit/emit-definitions.js';
import { emitGraphQL } from './emit/emit-graphql.js';
import { emitResolvers } from './emit/emit-resolvers.js';
import { emitSearch } from './emit/emit-search.js';
import { emitTypes } from './emit/emit-types.js';
import type { SpecIR } from './ir/ir-types.js';
import { buildIR } from './ir/build-ir.js';
import { loadSpec } from './load/load-spec.js';

/** Every emitter, one per output concern. */
export const emitters: readonly Emitter<SpecIR>[] = [
  emitDefinitions,
  emitGraphQL,
  emitResolvers,
  emitSearch,
  emitTypes,
];

/** spec/ → IR → generated files (not yet written). */
export function generate(specDir: string): GeneratedFile[] {
  const ir = buildIR(loadSpec(specDir));
  return emitters.flatMap((emit) => emit(ir));
}
