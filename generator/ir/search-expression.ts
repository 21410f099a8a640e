/**
 * A search parameter shared by several resource types (`name` on Patient, Practitioner and
 * RelatedPerson) has one FHIRPath expression joining every base's path with `|`. Each resource
 * type keeps only its own branches, so that its search map says exactly what is extracted.
 * Parameters declared on a type the resource derives from (Resource's `_id`, DomainResource's
 * `_text`) apply to it with every branch that starts at that type rewritten to start at the
 * resource type.
 * @see http://hl7.org/fhir/R4/searchparameter.html#SearchParameter.expression
 */
export function expressionForBase(expression: string, base: string, declaredOn: string): string {
  const branches = splitUnion(expression);
  if (declaredOn !== base) {
    const head = new RegExp(`^(\\(*)${declaredOn}\\b`);
    return branches.map((branch) => branch.replace(head, `$1${base}`)).join(' | ');
  }
  const own = branches.filter((branch) => startsWithType(branch, base));
  return own.length > 0 ? own.join(' | ') : expression;
}

/**
 * Splits on `|` outside parentheses and string literals. Inside a literal `\` escapes the next
 * character, so a quote ends the literal when an even number of backslashes precede it (`'x\\'`).
 * @see http://hl7.org/fhirpath/N1/#string
 */
export function splitUnion(expression: string): string[] {
  const branches: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < expression.length; i++) {
    const char = expression[i];
    if (char === "'" && !isEscaped(expression, i)) quoted = !quoted;
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

/** Whether an odd number of backslashes precede `expression[index]`. */
function isEscaped(expression: string, index: number): boolean {
  let backslashes = 0;
  while (expression[index - 1 - backslashes] === '\\') backslashes++;
  return backslashes % 2 === 1;
}

function startsWithType(branch: string, type: string): boolean {
  const unwrapped = branch.replace(/^\(+/, '');
  return unwrapped === type || unwrapped.startsWith(`${type}.`);
}
