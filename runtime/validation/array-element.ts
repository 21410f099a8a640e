/**
 * Array elements (`array: true`) and their companion `_x` arrays for primitives
 * (http://hl7.org/fhir/R4/json.html#primitive): both must be non-empty arrays, aligned by
 * index, where null marks the side that has nothing at that index.
 */
import type { ElementDefinition } from '../model/type-definition.js';
import {
  describe,
  isFull,
  isJsonObject,
  report,
  type ValidationContext,
} from './validation-context.js';

/** `x` and `_x` as found in the parent object, with their paths. */
export interface ArrayElementValues {
  readonly value: unknown;
  readonly extra: unknown;
  readonly path: string;
  readonly extraPath: string;
}

/** Validate one non-null member of `x` or of `_x`. */
export interface ArrayItemValidators {
  readonly value: (item: unknown, path: string) => void;
  readonly extra: (item: unknown, path: string) => void;
}

/** `x: [...]` and its companion `_x: [...]`, aligned by index; null marks a missing side. */
export function validateArrayElement(
  ctx: ValidationContext,
  element: ElementDefinition,
  { value, extra, path, extraPath }: ArrayElementValues,
  validate: ArrayItemValidators,
): void {
  const values = value === undefined ? undefined : checkArray(ctx, value, path);
  const extras = extra === undefined ? undefined : checkArray(ctx, extra, extraPath);
  if (values !== undefined && extras !== undefined && values.length !== extras.length) {
    const diagnostics = `${extraPath} must have one entry per entry of ${path} (${extras.length} vs ${values.length})`;
    report(ctx, 'structure', extraPath, diagnostics);
  }
  values?.forEach((item, i) => {
    if (isFull(ctx)) return;
    if (item !== null) {
      validate.value(item, `${path}[${i}]`);
    } else if (!isJsonObject(extras?.[i])) {
      reportNullItem(ctx, element, `${path}[${i}]`, `${extraPath}[${i}]`);
    }
  });
  extras?.forEach((item, i) => {
    if (isFull(ctx)) return;
    const itemPath = `${extraPath}[${i}]`;
    if (item !== null) {
      validate.extra(item, itemPath);
    } else if (value === undefined || (values !== undefined && values[i] == null)) {
      report(ctx, 'structure', itemPath, `${itemPath} is null but ${path}[${i}] has no value`);
    }
  });
}

function reportNullItem(
  ctx: ValidationContext,
  element: ElementDefinition,
  itemPath: string,
  extraItemPath: string,
): void {
  const diagnostics =
    element.kind === 'primitive'
      ? `${itemPath} must not be null unless ${extraItemPath} holds its id or extensions`
      : `${itemPath} must not be null`;
  report(ctx, 'structure', itemPath, diagnostics);
}

function checkArray(ctx: ValidationContext, value: unknown, path: string): unknown[] | undefined {
  if (!Array.isArray(value)) {
    report(ctx, 'structure', path, `Expected an array for ${path}, got ${describe(value)}`);
    return undefined;
  }
  if (value.length === 0) {
    report(ctx, 'structure', path, `${path} must not be an empty array (omit the element instead)`);
    return undefined;
  }
  return value;
}
