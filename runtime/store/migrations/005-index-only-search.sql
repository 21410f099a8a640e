-- Searches first find the ids that match every criterion in the index tables, and only then read
-- the resources (search-sql.ts). With the id in each value index, those steps are index-only
-- scans: gender=male over 1,000 Patients reads 11 pages instead of 432. Tokens keep `id` as a
-- key column so that a second criterion is probed (or merged) by id within one code and value.
-- Each index is built anew once, in the migration's transaction: on a large database, writes wait
-- for it at the first start of this version.
DROP INDEX IF EXISTS search_string_value;
CREATE INDEX search_string_value ON search_string (project_id, resource_type, code, value text_pattern_ops) INCLUDE (id);
DROP INDEX IF EXISTS search_string_exact;
CREATE INDEX search_string_exact ON search_string (project_id, resource_type, code, exact) INCLUDE (id);
DROP INDEX IF EXISTS search_token_value;
CREATE INDEX search_token_value ON search_token (project_id, resource_type, code, value, id) INCLUDE (system);
DROP INDEX IF EXISTS search_reference_target;
CREATE INDEX search_reference_target ON search_reference (project_id, target_type, target_id, code, resource_type) INCLUDE (id);
DROP INDEX IF EXISTS search_date_range;
CREATE INDEX search_date_range ON search_date (project_id, resource_type, code, start_at, end_at) INCLUDE (id);
DROP INDEX IF EXISTS search_number_value;
CREATE INDEX search_number_value ON search_number (project_id, resource_type, code, value) INCLUDE (id);
DROP INDEX IF EXISTS search_quantity_value;
CREATE INDEX search_quantity_value ON search_quantity (project_id, resource_type, code, value) INCLUDE (id);
DROP INDEX IF EXISTS search_uri_value;
CREATE INDEX search_uri_value ON search_uri (project_id, resource_type, code, value text_pattern_ops) INCLUDE (id);
