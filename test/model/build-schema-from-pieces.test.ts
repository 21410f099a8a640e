/**
 * Fields a piece adds to a type that another piece defines (`extensions`): the reverse-reference
 * fields a resource type C puts on every type its reference parameters can point to live in C's
 * piece, and the built schema has them on that type.
 */
import { GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchemaFromPieces } from '../../runtime/model/build-schema-from-pieces.js';
import type { SchemaPiece } from '../../runtime/model/schema-piece.js';

const target: SchemaPiece = {
  name: 'Patient',
  objects: [{ name: 'Patient', fields: [['id', 'String', 'Logical id']] }],
};

/** Condition: its own type, and the fields it adds to Patient and to itself. */
const source: SchemaPiece = {
  name: 'Condition',
  objects: [{ name: 'Condition', fields: [['code', 'String']] }],
  argumentSets: { 'Condition.reverse': [['_count', 'Int', 'Page size']] },
  extensions: [
    {
      type: 'Patient',
      fields: [['ConditionList', '[Condition]', 'Conditions about it', 'Condition.reverse']],
    },
    {
      type: 'Condition',
      fields: [['ConditionList', '[Condition]', undefined, 'Condition.reverse']],
    },
  ],
};

const objectType = (pieces: readonly SchemaPiece[], name: string) =>
  buildSchemaFromPieces(pieces).getType(name) as GraphQLObjectType;

describe('buildSchemaFromPieces, extensions', () => {
  it('adds a piece’s fields to the type it extends, after the type’s own', () => {
    const fields = objectType([source, target], 'Patient').getFields();
    expect(Object.keys(fields)).toStrictEqual(['id', 'ConditionList']);
    expect(String(fields.ConditionList.type)).toBe('[Condition]');
    expect(fields.ConditionList.description).toBe('Conditions about it');
  });

  it('extends a type of the same piece', () => {
    expect(Object.keys(objectType([source, target], 'Condition').getFields())).toStrictEqual([
      'code',
      'ConditionList',
    ]);
  });

  it('gives extension fields the argument set they name, shared', () => {
    const schema = buildSchemaFromPieces([source, target]);
    const args = (type: string) =>
      (schema.getType(type) as GraphQLObjectType).getFields().ConditionList.args;
    expect(args('Patient').map((a) => [a.name, String(a.type), a.description])).toStrictEqual([
      ['_count', 'Int', 'Page size'],
    ]);
    expect(args('Patient')).toBe(args('Condition'));
  });

  it.each<[name: string, pieces: SchemaPiece[], error: string]>([
    [
      'a type no piece defines',
      [{ name: 'Condition', extensions: [{ type: 'Nothing', fields: [['x', 'String']] }] }],
      'The piece Condition extends Nothing, which is not an object type of the schema',
    ],
    [
      'a type that is not an object type',
      [
        {
          name: 'Condition',
          enums: [{ name: 'Kind', values: ['a'] }],
          extensions: [{ type: 'Kind', fields: [['x', 'String']] }],
        },
      ],
      'The piece Condition extends Kind, which is not an object type of the schema',
    ],
    [
      'a field the type has already',
      [target, { name: 'Condition', extensions: [{ type: 'Patient', fields: [['id', 'Int']] }] }],
      'The field Patient.id is defined twice',
    ],
  ])('refuses an extension of %s', (_name, pieces, error) => {
    expect(() => buildSchemaFromPieces(pieces)).toThrow(error);
  });
});
