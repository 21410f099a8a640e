/**
 * The compact form in which `npm run generate` writes the GraphQL schema
 * (generated/graphql/*.json): one piece per resource type or datatype. The same pieces are
 * printed as SDL at generation time and built into the executable schema at start-up, so the two
 * cannot disagree.
 *
 * Type references are SDL type strings (`[HumanName]`, `ID!`). Fields with many
 * arguments name a shared argument set instead of listing them: every reverse-reference field
 * `ConditionList` on 84 resource types takes the same arguments, built once.
 */

/** `[name, type, description?, argumentSet?]` */
export type FieldData = readonly [
  name: string,
  type: string,
  description?: string,
  argumentSet?: string,
];

/** `[name, type, description?]` */
export type ArgumentData = readonly [name: string, type: string, description?: string];

export interface ObjectData {
  readonly name: string;
  readonly description?: string;
  readonly fields: readonly FieldData[];
}

export interface EnumData {
  readonly name: string;
  readonly description?: string;
  readonly values: readonly string[];
}

export interface UnionData {
  readonly name: string;
  readonly description?: string;
  readonly types: readonly string[];
}

export interface ScalarData {
  readonly name: string;
  readonly description?: string;
}

export interface DirectiveData {
  readonly name: string;
  readonly description?: string;
  readonly arguments: readonly ArgumentData[];
}

/** Fields a piece adds to an object type, its own or another piece's: `extend type Patient`. */
export interface ExtensionData {
  readonly type: string;
  readonly fields: readonly FieldData[];
}

export interface SchemaPiece {
  /** The resource type or datatype this piece was generated for, or `schema` for the shared part. */
  readonly name: string;
  readonly objects?: readonly ObjectData[];
  readonly inputs?: readonly ObjectData[];
  readonly enums?: readonly EnumData[];
  readonly unions?: readonly UnionData[];
  readonly scalars?: readonly ScalarData[];
  /** Directives used on query fields (`@flatten`), declared so that validation accepts them. */
  readonly directives?: readonly DirectiveData[];
  readonly argumentSets?: Readonly<Record<string, readonly ArgumentData[]>>;
  /**
   * Fields that come from this piece's search parameters but sit on the types they point to:
   * Condition's `ConditionList` on Patient. Kept with their source, so that a change to
   * Condition's search parameters changes Condition's files only.
   */
  readonly extensions?: readonly ExtensionData[];
  readonly query?: readonly FieldData[];
  readonly mutation?: readonly FieldData[];
}
