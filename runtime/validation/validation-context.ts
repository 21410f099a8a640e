/** Shared state and small helpers for one validateResource run. */
import type { DefinitionRegistry } from '../model/type-definition.js';
import type { ValidationIssue, ValidationIssueCode } from './validation-issue.js';

/** At most this many issues are reported; validation stops once it is reached. */
export const MAX_ISSUES = 100;

/** Objects nested deeper than this are reported instead of walked (guards the call stack). */
export const MAX_DEPTH = 100;

export interface ValidationContext {
  readonly registry: DefinitionRegistry;
  readonly issues: ValidationIssue[];
  /** Current object nesting depth. */
  depth: number;
}

export type JsonObject = Record<string, unknown>;

export function report(
  ctx: ValidationContext,
  code: ValidationIssueCode,
  expression: string,
  diagnostics: string,
): void {
  if (ctx.issues.length < MAX_ISSUES) {
    ctx.issues.push({ severity: 'error', code, expression, diagnostics });
  }
}

export function isFull(ctx: ValidationContext): boolean {
  return ctx.issues.length >= MAX_ISSUES;
}

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object's own property (never one inherited from Object.prototype). */
export function ownValue(obj: JsonObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** `"abc"`, quoted and shortened for use in a diagnostic. */
export function quote(text: string): string {
  const max = 80;
  const shown = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(shown);
}

/** What a JSON value is, for "expected X, got Y" diagnostics. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return `a string (${quote(value)})`;
    case 'number':
    case 'boolean':
      return `a ${typeof value} (${String(value)})`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}
