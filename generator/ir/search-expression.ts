/**
 * A search parameter shared by several resource types (`name` on Patient, Practitioner and
 * RelatedPerson) has one FHIRPath expression joining every base's path with `|`. Each resource
 * type keeps only its own branches, so that its search map says exactly what is extracted.
 * Parameters defined on Resource (`_id`, `_lastUpdated`) are rewritten to the concrete type.
 * @see http://hl7.org/fhir/R4/searchparameter.html#SearchParameter.expression
 */
export function expressionForBase(expression: string, base: string, declaredOn: string): string {
  if (declaredOn === 'Resource' || declaredOn === 'DomainResource') {
    return expression.replace(new RegExp(`^${declaredOn}\\.`), `${base}.`);
  }
  const branches = splitUnion(expression);
  const own = branches.filter((branch) => startsWithType(branch, base));
  return own.length > 0 ? own.join(' | ') : expression;
}

/** Splits on `|` outside parentheses and string literals. */
export function splitUnion(expression: string): string[] {
  const branches: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < expression.length; i++) {
    const char = expression[i];
    if (char === "'" && expression[i - 1] !== '\\') quoted = !quoted;
    if (quoted) continue;
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === '|' && depth === 0) {
      branches.push(expression.slice(start, i).trim());
      start = i + 1;
    }
  }
  branches.push(expression.slice(start).trim());
  return branches.filter((branch) => branch.length > 0);
}

function startsWithType(branch: string, type: string): boolean {
  const unwrapped = branch.replace(/^\(+/, '');
  return unwrapped === type || unwrapped.startsWith(`${type}.`);
}
