/**
 * The GraphQL schema pieces' own loud failures (generator/emit/graphql-pieces.ts); what the pieces
 * hold is checked by the golden files.
 */
import { describe, expect, it } from 'vitest';
import { buildSchemaPieces } from '../../generator/emit/graphql-pieces.js';
import { buildIR } from '../../generator/ir/build-ir.js';
import { fixtureWith } from './spec-builders.js';

describe('buildSchemaPieces', () => {
  it('says how to fix a spec without OperationOutcome, which <Type>Delete returns', () => {
    const ir = buildIR(fixtureWith({}, ['OperationOutcome']));
    expect(() => buildSchemaPieces(ir)).toThrow(
      "spec/ has no OperationOutcome resource, which every <Type>Delete mutation returns: add HL7's OperationOutcome StructureDefinition (from profiles-resources.json) to spec/",
    );
  });
});
