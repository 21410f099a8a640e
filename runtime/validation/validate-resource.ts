/**
 * Validates FHIR R4 JSON (http://hl7.org/fhir/R4/json.html) against the generated type
 * definitions: structure, cardinality, choice types and primitive values. Reference targets
 * and invariants are not checked here.
 */
import type {
  DefinitionRegistry,
  ElementDefinition,
  TypeDefinition,
} from '../model/type-definition.js';
import { validateArrayElement } from './array-element.js';
import { checkPrimitive } from './primitive-value.js';
import {
  MAX_DEPTH,
  describe,
  isFull,
  isJsonObject,
  ownValue,
  quote,
  report,
  type JsonObject,
  type ValidationContext,
} from './validation-context.js';
import { ResourceValidationError, type ValidationIssue } from './validation-issue.js';
import {
  PRIMITIVE_ELEMENT_TYPE,
  indexType,
  isResourceType,
  lookupPrimitive,
  lookupType,
  type TypeIndex,
} from './type-index.js';

export interface ValidateResourceOptions {
  /** The resource type the caller requires, e.g. from the URL of a PUT. */
  readonly expectedType?: string;
}

/** All problems with `value` as a resource (at most MAX_ISSUES); an empty array means valid. */
export function validateResource(
  value: unknown,
  registry: DefinitionRegistry,
  options: ValidateResourceOptions = {},
): ValidationIssue[] {
  const ctx: ValidationContext = { registry, issues: [], depth: 0 };
  validateResourceValue(ctx, value, undefined, options.expectedType);
  return ctx.issues;
}

/** `value` typed as T when valid; otherwise throws ResourceValidationError with the issues. */
export function parseResource<T>(
  value: unknown,
  registry: DefinitionRegistry,
  options: ValidateResourceOptions = {},
): T {
  const issues = validateResource(value, registry, options);
  if (issues.length > 0) throw new ResourceValidationError(issues);
  return value as T;
}

/**
 * A resource at the root (`at` undefined: paths start with its type) or inside another one
 * (`Patient.contained[0]`: paths continue from there).
 */
function validateResourceValue(
  ctx: ValidationContext,
  value: unknown,
  at: string | undefined,
  expectedType: string | undefined,
): void {
  const where = at ?? expectedType ?? 'Resource';
  if (!isJsonObject(value)) {
    const what = at === undefined ? 'a resource' : at;
    report(ctx, 'structure', where, `Expected a JSON object for ${what}, got ${describe(value)}`);
    return;
  }
  const resourceType = ownValue(value, 'resourceType');
  const typePath = `${where}.resourceType`;
  if (resourceType === undefined) {
    report(ctx, 'required', typePath, `${typePath} is required`);
  } else if (typeof resourceType !== 'string') {
    report(ctx, 'value', typePath, `${typePath} must be a string, got ${describe(resourceType)}`);
  } else if (expectedType !== undefined && resourceType !== expectedType) {
    const diagnostics = `Expected resourceType ${quote(expectedType)}, got ${quote(resourceType)}`;
    report(ctx, 'invalid', typePath, at === undefined ? diagnostics : `${at}: ${diagnostics}`);
  } else if (!isResourceType(ctx.registry, resourceType)) {
    report(ctx, 'value', typePath, `Unknown resource type ${quote(resourceType)}`);
  } else {
    const def = lookupType(ctx.registry, resourceType, typePath);
    validateObject(ctx, value, def, at ?? resourceType, true);
  }
}

/** A complex value: a non-empty JSON object whose properties match `def`. */
function validateComplexValue(
  ctx: ValidationContext,
  value: unknown,
  def: TypeDefinition,
  path: string,
): void {
  if (!isJsonObject(value)) {
    report(ctx, 'structure', path, `Expected an object for ${path}, got ${describe(value)}`);
  } else if (Object.keys(value).length === 0) {
    report(ctx, 'structure', path, `${path} must not be empty (omit the element instead)`);
  } else {
    validateObject(ctx, value, def, path, false);
  }
}

function validateObject(
  ctx: ValidationContext,
  obj: JsonObject,
  def: TypeDefinition,
  path: string,
  isResourceRoot: boolean,
): void {
  if (ctx.depth >= MAX_DEPTH) {
    report(ctx, 'structure', path, `${path} is nested too deeply (more than ${MAX_DEPTH} levels)`);
    return;
  }
  const index = indexType(def);
  ctx.depth++;
  checkPropertyNames(ctx, obj, def, index, path, isResourceRoot);
  checkRequired(ctx, obj, index, path);
  checkChoiceGroups(ctx, obj, index, path);
  for (const element of def.elements) {
    if (isFull(ctx)) break;
    validateElement(ctx, obj, element, path);
  }
  ctx.depth--;
}

function checkPropertyNames(
  ctx: ValidationContext,
  obj: JsonObject,
  def: TypeDefinition,
  index: TypeIndex,
  path: string,
  isResourceRoot: boolean,
): void {
  for (const key of Object.keys(obj)) {
    if (index.byName.has(key)) continue;
    if (key === 'resourceType') {
      if (!isResourceRoot) {
        const diagnostics = `"resourceType" is allowed only at the root of a resource, not in ${path}`;
        report(ctx, 'structure', `${path}.resourceType`, diagnostics);
      }
      continue;
    }
    const base = key.startsWith('_') ? index.byName.get(key.slice(1)) : undefined;
    if (base?.kind === 'primitive' && base.extensible !== false) continue;
    const hint = base === undefined ? '' : ` ("_" properties exist only for primitive elements)`;
    report(
      ctx,
      'structure',
      `${path}.${key}`,
      `Unknown element ${quote(key)} in ${def.path}${hint}`,
    );
  }
}

/** An element counts as present with a value, or (for primitives) with only `_x` (id/extension). */
function isPresent(obj: JsonObject, element: ElementDefinition): boolean {
  if (ownValue(obj, element.name) !== undefined) return true;
  return (
    element.kind === 'primitive' &&
    element.extensible !== false &&
    ownValue(obj, `_${element.name}`) !== undefined
  );
}

function checkRequired(
  ctx: ValidationContext,
  obj: JsonObject,
  index: TypeIndex,
  path: string,
): void {
  for (const element of index.required) {
    if (!isPresent(obj, element)) {
      report(ctx, 'required', `${path}.${element.name}`, `${path}.${element.name} is required`);
    }
  }
}

function checkChoiceGroups(
  ctx: ValidationContext,
  obj: JsonObject,
  index: TypeIndex,
  path: string,
): void {
  for (const [group, members] of index.choiceGroups) {
    const groupPath = `${path}.${group}[x]`;
    const present = members.filter((member) => isPresent(obj, member));
    if (present.length > 1) {
      const names = present.map((member) => `${path}.${member.name}`).join(', ');
      report(ctx, 'invalid', groupPath, `Only one of ${names} may be present`);
    } else if (present.length === 0 && members.some((member) => member.min >= 1)) {
      report(ctx, 'required', groupPath, `${groupPath} is required`);
    }
  }
}

function validateElement(
  ctx: ValidationContext,
  obj: JsonObject,
  element: ElementDefinition,
  parent: string,
): void {
  const value = ownValue(obj, element.name);
  const extra = element.kind === 'primitive' ? ownValue(obj, `_${element.name}`) : undefined;
  if (value === undefined && extra === undefined) return;
  const path = `${parent}.${element.name}`;
  const extraPath = `${parent}._${element.name}`;
  if (element.array) {
    validateArrayElement(
      ctx,
      element,
      { value, extra, path, extraPath },
      {
        value: (item, itemPath) => validateValue(ctx, element, item, itemPath),
        extra: (item, itemPath) => validatePrimitiveExtra(ctx, item, itemPath),
      },
    );
    return;
  }
  if (Array.isArray(value)) {
    report(ctx, 'structure', path, `Expected a single value for ${path}, not an array`);
  } else if (value === null) {
    report(ctx, 'structure', path, `${path} must not be null (omit the element instead)`);
  } else if (value !== undefined) {
    validateValue(ctx, element, value, path);
  }
  if (extra !== undefined) validatePrimitiveExtra(ctx, extra, extraPath);
}

/** `_x` for a primitive `x`: an object with id and/or extension. */
function validatePrimitiveExtra(ctx: ValidationContext, extra: unknown, path: string): void {
  validateComplexValue(ctx, extra, PRIMITIVE_ELEMENT_TYPE, path);
}

/** One non-null value of `element`: a primitive, a datatype or backbone, or a resource. */
function validateValue(
  ctx: ValidationContext,
  element: ElementDefinition,
  value: unknown,
  path: string,
): void {
  switch (element.kind) {
    case 'primitive':
      checkPrimitive(ctx, lookupPrimitive(ctx.registry, element.type, path), value, path);
      break;
    case 'complex':
      validateComplexValue(ctx, value, lookupType(ctx.registry, element.type, path), path);
      break;
    case 'resource': {
      const concrete = isResourceType(ctx.registry, element.type) ? element.type : undefined;
      validateResourceValue(ctx, value, path, concrete);
      break;
    }
  }
}
