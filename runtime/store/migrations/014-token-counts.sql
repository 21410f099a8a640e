-- Kept counts of token values, for `_total=accurate` of a search by one token
-- (search-sql-token-count.ts): how many resources of a type have a value of a code, read as the
-- sum of a few rows instead of counting every match's index rows (32,180 index rows, 7-13 ms, for
-- one LOINC code in a project of 500,000 resources).
--
-- Rows are deltas, only ever inserted by writes: a write adds, in the statement that writes its
-- token index rows, one row per key whose count it changes (token-count-writes.ts). Concurrent
-- writers never update one row, so none waits for another on a common value (status=final).
-- Compaction folds a key's rows into one (token-count-compaction.ts).
--
-- A row counts resources, not index rows: a resource with a value twice in one system counts
-- once. Rows with any_system = false count the resources with the value in `system` (NULL: with
-- no system). A resource with the value in n systems counts once in each of them, and so n times
-- in their sum; rows with any_system = true (system NULL) take the n - 1 off: the resources with
-- the value in any system are the sum of all the value's rows. Such resources are rare, and most
-- values need no any_system row at all.
CREATE TABLE search_token_count (
  project_id text COLLATE "C" NOT NULL,
  resource_type text COLLATE "C" NOT NULL,
  code text COLLATE "C" NOT NULL,
  value text COLLATE "C" NOT NULL,
  any_system boolean NOT NULL,
  system text COLLATE "C",
  delta bigint NOT NULL,
  -- false for a write's delta, true for a compaction's sum: compaction looks for the former.
  folded boolean NOT NULL DEFAULT false
);

-- The counts of the existing index rows, as compacted rows. Index rows without a value (a
-- CodeableConcept with text only) match no search by value and are not counted.
INSERT INTO search_token_count (project_id, resource_type, code, value, any_system, system, delta, folded)
SELECT project_id, resource_type, code, value, false, system, count(DISTINCT id), true
FROM search_token WHERE value IS NOT NULL
GROUP BY project_id, resource_type, code, value, system;

INSERT INTO search_token_count (project_id, resource_type, code, value, any_system, system, delta, folded)
SELECT project_id, resource_type, code, value, true, NULL, sum(1 - systems), true
FROM (
  SELECT project_id, resource_type, id, code, value,
         count(DISTINCT system) + max(CASE WHEN system IS NULL THEN 1 ELSE 0 END) AS systems
  FROM search_token WHERE value IS NOT NULL
  GROUP BY project_id, resource_type, id, code, value
) resource_values
WHERE systems > 1
GROUP BY project_id, resource_type, code, value;

CREATE INDEX search_token_count_key ON search_token_count (project_id, resource_type, code, value, any_system, system) INCLUDE (delta);
CREATE INDEX search_token_count_unfolded ON search_token_count (project_id) WHERE NOT folded;
