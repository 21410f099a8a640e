/**
 * A query text read token by token, once per request, into its shape: the text with every value
 * written into a field argument replaced by a placeholder (`Patient(id: "a1")` and
 * `Patient(id: "b2")` have one shape, `Patient ( id : __lit0 )`), and the values taken out.
 * Queries of one shape share one parsed, validated and compiled plan (prepared-query-cache.ts),
 * whatever ids and names their texts carry; the values then travel as variables.
 *
 * The shape is itself a GraphQL text, one token per token of the query, so that a position in
 * the plan maps back to the same token of any text of the shape (relocate-errors.ts). The
 * placeholders are enum-like names, which argument-literals.ts turns into variables. Values in
 * directive arguments (`@slice(path: "…")`) and in variables' default values stay in the shape:
 * FHIR's directives are read from the query, and a default cannot be a variable.
 *
 * Reading also enforces the limits that protect parsing: the token count, and the nesting of
 * braces, brackets and parentheses (graphql-js parses recursively).
 */
import { GraphQLError, Lexer, Source, TokenKind, type Token } from 'graphql';

/** A value taken out of the text: what the lexer read, and as what. */
export interface Literal {
  readonly kind: 'string' | 'int' | 'float' | 'name';
  readonly value: string;
}

export interface QueryShape {
  /** The shape as GraphQL text, on one line. */
  readonly key: string;
  /** Start offset in the query text of each token (the key's are found again when needed). */
  readonly textStarts: readonly number[];
  /** The values, placeholder `__lit<i>` for `literals[i]`. */
  readonly literals: readonly Literal[];
  readonly tokens: number;
  /** False when the text already uses a placeholder's name: it is then checked as written. */
  readonly shareable: boolean;
}

export const PLACEHOLDER_PREFIX = '__lit';
export const PLACEHOLDER = /^__lit(\d+)$/;

/**
 * graphql-js parses recursively: some thousands of nested braces, brackets or parentheses
 * overflow the stack (a 500). Counted on the tokens first, far past anything a query needs (the
 * depth limit allows 15 levels of selections; FHIR resources as literals nest a few dozen).
 */
const MAX_NESTING = 500;

const PUNCTUATORS = new Set<string>([
  TokenKind.BANG,
  TokenKind.DOLLAR,
  TokenKind.AMP,
  TokenKind.PAREN_L,
  TokenKind.PAREN_R,
  TokenKind.SPREAD,
  TokenKind.COLON,
  TokenKind.EQUALS,
  TokenKind.AT,
  TokenKind.BRACKET_L,
  TokenKind.BRACKET_R,
  TokenKind.BRACE_L,
  TokenKind.PIPE,
  TokenKind.BRACE_R,
]);
const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * The shape of `text`, or undefined when it does not lex (the parser will say why). Throws past
 * `maxTokens` or MAX_NESTING, with the position.
 */
export function readQueryShape(text: string, maxTokens: number): QueryShape | undefined {
  const source = new Source(text);
  const lexer = new Lexer(source);
  const parts: string[] = [];
  const textStarts: number[] = [];
  const literals: Literal[] = [];
  let nesting = 0;
  let braces = 0;
  // Per open parenthesis: whether it holds field arguments; within them, the open `[` and `{`.
  const parentheses: boolean[] = [];
  const values: string[] = [];
  let before: Token | undefined;
  let previous: Token | undefined;
  let shareable = true;
  for (;;) {
    let token: Token;
    try {
      token = lexer.advance();
    } catch {
      return undefined;
    }
    if (token.kind === TokenKind.EOF) break;
    if (textStarts.length >= maxTokens)
      throw new GraphQLError(`The query has more than ${maxTokens} tokens`, {
        source,
        positions: [token.start],
        extensions: { code: 'QUERY_LIMIT' },
      });
    if (OPENING.has(token.kind) && ++nesting > MAX_NESTING)
      throw new GraphQLError(
        `The query nests braces, brackets and parentheses more than ${MAX_NESTING} deep`,
        { source, positions: [token.start], extensions: { code: 'QUERY_LIMIT' } },
      );
    if (CLOSING.has(token.kind)) nesting--;

    const inArguments = parentheses.at(-1) === true;
    let part: string;
    if (inArguments && isValue(token, previous, values.at(-1))) {
      part = PLACEHOLDER_PREFIX + literals.length;
      literals.push({ kind: literalKind(token.kind), value: token.value });
    } else if (token.kind === TokenKind.STRING || token.kind === TokenKind.BLOCK_STRING) {
      part = JSON.stringify(token.value);
    } else {
      part = PUNCTUATORS.has(token.kind) ? token.kind : token.value;
      if (token.kind === TokenKind.NAME && token.value.startsWith(PLACEHOLDER_PREFIX))
        shareable = false;
    }

    switch (token.kind) {
      case TokenKind.PAREN_L:
        // Field arguments, unless a directive's (`@name(`) or an operation's variables (outside
        // any selection set).
        parentheses.push(before?.kind !== TokenKind.AT && braces > 0);
        break;
      case TokenKind.PAREN_R:
        parentheses.pop();
        values.length = 0;
        break;
      case TokenKind.BRACE_L:
        braces++;
        if (inArguments) values.push('{');
        break;
      case TokenKind.BRACE_R:
        braces--;
        if (inArguments) values.pop();
        break;
      case TokenKind.BRACKET_L:
        if (inArguments) values.push('[');
        break;
      case TokenKind.BRACKET_R:
        if (inArguments) values.pop();
        break;
    }

    textStarts.push(token.start);
    parts.push(part);
    before = previous;
    previous = token;
  }
  return {
    shareable,
    key: parts.join(' '),
    textStarts,
    literals,
    tokens: textStarts.length,
  };
}

/**
 * Whether `token`, inside field arguments, is a value that can travel as a variable: a string or
 * number anywhere there, or a name (an enum value, `true`, FHIR's unquoted `example`) after a
 * colon or in a list. `null` stays: a variable's value cannot stand for an explicit null.
 */
function isValue(token: Token, previous: Token | undefined, container: string | undefined) {
  switch (token.kind) {
    case TokenKind.STRING:
    case TokenKind.BLOCK_STRING:
    case TokenKind.INT:
    case TokenKind.FLOAT:
      return true;
    case TokenKind.NAME:
      return (
        token.value !== 'null' &&
        previous?.kind !== TokenKind.DOLLAR &&
        (previous?.kind === TokenKind.COLON || container === '[')
      );
    default:
      return false;
  }
}

function literalKind(kind: string): Literal['kind'] {
  switch (kind) {
    case TokenKind.INT:
      return 'int';
    case TokenKind.FLOAT:
      return 'float';
    case TokenKind.NAME:
      return 'name';
    default:
      return 'string';
  }
}
