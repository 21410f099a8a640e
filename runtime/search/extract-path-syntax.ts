/**
 * The little FHIRPath the fast path of search extraction understands (extract-path-plan.ts):
 * terms joined by `|`, each a dotted path (parts of it may be in parentheses) whose names may be
 * followed by `.ofType(T)` and then `.where(name='literal')`, and the whole by
 * `.where(resolve() is T)`. Anything else parses to undefined and goes to fhirpath.js.
 */

export type Segment =
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'ofType'; readonly type: string }
  | { readonly kind: 'whereEquals'; readonly name: string; readonly literal: string }
  | { readonly kind: 'whereResolveIs'; readonly type: string };

const NAME = /^[A-Za-z][A-Za-z0-9]*$/;
const OF_TYPE = /^ofType\(([A-Za-z]+)\)$/;
const WHERE_EQUALS = /^where\(([A-Za-z][A-Za-z0-9]*)\s*=\s*'([^'\\]*)'\)$/;
const WHERE_RESOLVE_IS = /^where\(resolve\(\) is ([A-Za-z]+)\)$/;

/** Each term of a union as its segments, or undefined when some term is not a plain path. */
export function parsePathUnion(expression: string): Segment[][] | undefined {
  const terms: Segment[][] = [];
  for (const text of splitOutside(expression, '|')) {
    const segments = parsePath(stripParentheses(text));
    if (!segments) return undefined;
    terms.push(segments);
  }
  return terms;
}

/** `a.b.ofType(T)`, where a part may itself be a parenthesized path: `(a.b.ofType(T)).c`. */
function parsePath(text: string): Segment[] | undefined {
  const segments: Segment[] = [];
  for (const part of splitOutside(text, '.')) {
    if (part.startsWith('(')) {
      const inner = parsePathUnion(part);
      if (inner?.length !== 1 || stripParentheses(part) === part) return undefined;
      segments.push(...inner[0]);
    } else {
      const segment = parseSegment(part);
      if (!segment) return undefined;
      segments.push(segment);
    }
  }
  return segments;
}

function parseSegment(text: string): Segment | undefined {
  if (NAME.test(text)) return { kind: 'name', name: text };
  let match = OF_TYPE.exec(text);
  if (match) return { kind: 'ofType', type: match[1] };
  match = WHERE_EQUALS.exec(text);
  if (match) return { kind: 'whereEquals', name: match[1], literal: match[2] };
  match = WHERE_RESOLVE_IS.exec(text);
  return match ? { kind: 'whereResolveIs', type: match[1] } : undefined;
}

/** Splits at `separator` outside parentheses and string literals, trimming each part. */
function splitOutside(expression: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < expression.length; i++) {
    const char = expression[i];
    if (quoted) {
      if (char === '\\') i++;
      else if (char === "'") quoted = false;
    } else if (char === "'") quoted = true;
    else if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === separator && depth === 0) {
      parts.push(expression.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(expression.slice(start).trim());
  return parts;
}

/** `((a.b))` → `a.b`, but `(a).b` stays as it is. */
function stripParentheses(text: string): string {
  while (text.startsWith('(') && closingParenthesis(text) === text.length - 1) {
    text = text.slice(1, -1).trim();
  }
  return text;
}

function closingParenthesis(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i;
  }
  return -1;
}
