/**
 * Which searches a page walks (runtime/store/search-sql-walk.ts): the first criterion of one token
 * value, when there are others to probe and the page ends early enough.
 */
import { describe, expect, it } from 'vitest';
import { loadSearchDefinition } from '../../generated/search/index.js';
import { parseCriterion } from '../../runtime/search/parse-search-arguments.js';
import { criterionSql, type IndexMatch } from '../../runtime/store/search-sql-criteria.js';
import { SqlParams } from '../../runtime/store/search-sql-params.js';
import { chooseWalk, MAX_WALKED_PAGE_END } from '../../runtime/store/search-sql-walk.js';

const definition = loadSearchDefinition('Observation');

/** The index matches of `query` (REST syntax), as search-sql.ts splits them. */
function matches(query: string): IndexMatch[] {
  const context = { params: new SqlParams(), project: '$1::text', resourceType: '$2::text' };
  return [...new URLSearchParams(query)].flatMap(([name, value]) => {
    const [code, modifier] = name.split(':');
    const sql = criterionSql(
      context,
      definition,
      parseCriterion(definition, code, modifier, value, name),
    );
    return 'match' in sql ? [sql.match] : [];
  });
}

describe('chooseWalk', () => {
  it.each([
    ['a code and a subject: the code walked', 'subject=Patient/p&code=8867-4', 'code'],
    ['system|code', 'code=http://loinc.org|8867-4&subject=Patient/p', 'code'],
    ['|code', 'code=|8867-4&subject=Patient/p', 'code'],
    ['two token values: the first', 'status=final&code=8867-4', 'status'],
    ['one criterion: nothing to probe', 'code=8867-4', undefined],
    ['several values: not in one order', 'code=8867-4,8480-6&subject=Patient/p', undefined],
    ['any code of a system', 'code=http://loinc.org|&subject=Patient/p', undefined],
    ['a token by its text', 'code:text=weight&subject=Patient/p', undefined],
    ['no token', 'subject=Patient/p&date=2024', undefined],
  ])('%s', (_name, query, walked) => {
    expect(chooseWalk(matches(query), 20, 20)?.walked.code).toBe(walked);
  });

  it('probes every other criterion', () => {
    const walk = chooseWalk(matches('subject=Patient/p&code=8867-4&date=2024'), 20, 20);
    expect(walk?.probed.map((match) => match.code)).toEqual(['subject', 'date']);
  });

  it('walks no empty page and none ending past the bound', () => {
    const both = matches('code=8867-4&subject=Patient/p');
    expect(chooseWalk(both, 0, 0)).toBeUndefined();
    expect(chooseWalk(both, 20, MAX_WALKED_PAGE_END)).toBeDefined();
    expect(chooseWalk(both, 20, MAX_WALKED_PAGE_END + 1)).toBeUndefined();
  });
});
