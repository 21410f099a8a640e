-- `_id` and `_lastUpdated` are answered from the resource row's columns (search-sql-criteria.ts),
-- so their index rows were never read; they are no longer written (extract-search-index.ts),
-- and these are the ones written before. Each write now has two index rows fewer to insert (an
-- AuditEvent of a bot execution had 8).
DELETE FROM search_token WHERE code = '_id';
DELETE FROM search_date WHERE code = '_lastUpdated';
