/** OperationOutcome as the server writes it, and where its issues point in a JSON text. */

export interface OutcomeIssue {
  readonly severity: string;
  readonly code: string;
  readonly diagnostics?: string;
  readonly details?: { readonly text?: string };
  readonly expression?: readonly string[];
  readonly location?: readonly string[];
}

export interface OperationOutcome {
  readonly resourceType: 'OperationOutcome';
  readonly issue: readonly OutcomeIssue[];
}

/** The element paths an issue names: `Patient.name[0].given` and the like. */
export function issuePaths(issue: OutcomeIssue): string[] {
  return [...(issue.expression ?? []), ...(issue.location ?? [])];
}

/**
 * The 1-based line of a JSON text where `path` (FHIRPath-like: `Patient.name[0].given[1]`, the
 * leading type optional) starts, or of its nearest ancestor present in the text; undefined when
 * the text is not JSON an element of which it names.
 */
export function lineOfPath(text: string, path: string): number | undefined {
  const steps = pathSteps(path);
  const lines = pathLines(text);
  if (!lines) return undefined;
  for (let n = steps.length; n >= 0; n--) {
    const line = lines.get(steps.slice(0, n).join('/'));
    if (line !== undefined) return line;
  }
  return undefined;
}

/** `Patient.name[0].given` → ['name', '0', 'given']: the leading type name is dropped. */
function pathSteps(path: string): string[] {
  const steps = path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean);
  if (steps.length > 0 && /^[A-Z]/.test(steps[0])) steps.shift();
  return steps;
}

/**
 * Every value's path (`name/0/given`) → the line it starts on, by one pass over the text with a
 * small JSON scanner; undefined when the text is not JSON.
 */
function pathLines(text: string): Map<string, number> | undefined {
  const lines = new Map<string, number>();
  let at = 0;
  let line = 1;
  const fail = (): never => {
    throw new SyntaxError('not JSON');
  };
  const skipSpace = () => {
    while (at < text.length && /\s/.test(text[at])) {
      if (text[at] === '\n') line++;
      at++;
    }
  };
  const string = (): string => {
    const start = at;
    at++;
    while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    if (at >= text.length) fail();
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const value = (path: string[]): void => {
    skipSpace();
    lines.set(path.join('/'), line);
    const c = text[at];
    if (c === '{') {
      at++;
      skipSpace();
      if (text[at] === '}') return void at++;
      for (;;) {
        skipSpace();
        if (text[at] !== '"') fail();
        const keyLine = line;
        const key = string();
        skipSpace();
        if (text[at++] !== ':') fail();
        value([...path, key]);
        // A member points at its key's line, where a reader looks for it.
        lines.set([...path, key].join('/'), keyLine);
        skipSpace();
        if (text[at] === ',') at++;
        else if (text[at] === '}') return void at++;
        else fail();
      }
    }
    if (c === '[') {
      at++;
      skipSpace();
      if (text[at] === ']') return void at++;
      for (let index = 0; ; index++) {
        value([...path, String(index)]);
        skipSpace();
        if (text[at] === ',') at++;
        else if (text[at] === ']') return void at++;
        else fail();
      }
    }
    if (c === '"') return void string();
    const literal = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at, at + 64));
    if (!literal) fail();
    at += literal![0].length;
  };
  try {
    value([]);
    return lines;
  } catch {
    return undefined;
  }
}
