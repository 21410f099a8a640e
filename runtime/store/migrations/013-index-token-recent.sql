-- Token matches in last-update order, newest first, as a search without _sort pages them
-- (search-sql.ts, pageFromIndex): with the value before the last update in the key, the rows of
-- one `system|code` come in page order, so the first page reads its own rows and stops. Through
-- search_token_value (ordered by id after the value) every match was read, grouped and sorted
-- for each page: Observation?code=<one LOINC code of six> in a project of 500,000 resources
-- (32,180 matches, bench:scale at 1,000,000), 29 ms → 0.08 ms for the page's statement alone.
-- search_token_value stays: it answers the probes by id of a search's other criteria, and
-- counts. The new index adds about a third to the token index's size (464 MB at 1,000,000
-- resources); built in the migration's transaction, in 7 s at that size on a 2-core machine.

CREATE INDEX search_token_recent ON search_token (project_id, resource_type, code, value, last_updated DESC, id) INCLUDE (system, version_id);
