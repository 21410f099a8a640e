-- Each index row carries its resource's last update, in the value indexes beside the id. A search
-- in the default order (newest first) then picks its page from the index rows alone and reads
-- only that page's resources (search-sql.ts), where it read every match's resource to sort them:
-- address-city=Austin&gender=male over 1,000 Patients, 85 matches, 85 resources read for a page
-- of 20 before, 20 now (0.42 → 0.27 ms on PostgreSQL, 0.44 → 0.23 ms on PGlite).
--
-- That rests on what the writer (write-versions.ts) keeps true: index rows exist only for the
-- current version of a resource that is not deleted, and are written with it. Rows that break
-- it (none should exist) are removed here. Each value index is built anew, in the migration's
-- transaction: on a large database, writes wait for it at the first start of this version.
DELETE FROM search_string i WHERE NOT EXISTS (SELECT 1 FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id AND NOT r.deleted);
DELETE FROM search_token i WHERE NOT EXISTS (SELECT 1 FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id AND NOT r.deleted);
DELETE FROM search_reference i WHERE NOT EXISTS (SELECT 1 FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id AND NOT r.deleted);
DELETE FROM search_date i WHERE NOT EXISTS (SELECT 1 FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id AND NOT r.deleted);
DELETE FROM search_number i WHERE NOT EXISTS (SELECT 1 FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id AND NOT r.deleted);
DELETE FROM search_quantity i WHERE NOT EXISTS (SELECT 1 FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id AND NOT r.deleted);
DELETE FROM search_uri i WHERE NOT EXISTS (SELECT 1 FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id AND NOT r.deleted);

ALTER TABLE search_string ADD COLUMN IF NOT EXISTS last_updated timestamptz;
ALTER TABLE search_token ADD COLUMN IF NOT EXISTS last_updated timestamptz;
ALTER TABLE search_reference ADD COLUMN IF NOT EXISTS last_updated timestamptz;
ALTER TABLE search_date ADD COLUMN IF NOT EXISTS last_updated timestamptz;
ALTER TABLE search_number ADD COLUMN IF NOT EXISTS last_updated timestamptz;
ALTER TABLE search_quantity ADD COLUMN IF NOT EXISTS last_updated timestamptz;
ALTER TABLE search_uri ADD COLUMN IF NOT EXISTS last_updated timestamptz;

UPDATE search_string i SET last_updated = r.last_updated FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id;
UPDATE search_token i SET last_updated = r.last_updated FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id;
UPDATE search_reference i SET last_updated = r.last_updated FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id;
UPDATE search_date i SET last_updated = r.last_updated FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id;
UPDATE search_number i SET last_updated = r.last_updated FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id;
UPDATE search_quantity i SET last_updated = r.last_updated FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id;
UPDATE search_uri i SET last_updated = r.last_updated FROM resource r WHERE r.project_id = i.project_id AND r.resource_type = i.resource_type AND r.id = i.id;

ALTER TABLE search_string ALTER COLUMN last_updated SET NOT NULL;
ALTER TABLE search_token ALTER COLUMN last_updated SET NOT NULL;
ALTER TABLE search_reference ALTER COLUMN last_updated SET NOT NULL;
ALTER TABLE search_date ALTER COLUMN last_updated SET NOT NULL;
ALTER TABLE search_number ALTER COLUMN last_updated SET NOT NULL;
ALTER TABLE search_quantity ALTER COLUMN last_updated SET NOT NULL;
ALTER TABLE search_uri ALTER COLUMN last_updated SET NOT NULL;

DROP INDEX IF EXISTS search_string_value;
CREATE INDEX search_string_value ON search_string (project_id, resource_type, code, value text_pattern_ops) INCLUDE (id, last_updated);
DROP INDEX IF EXISTS search_string_exact;
CREATE INDEX search_string_exact ON search_string (project_id, resource_type, code, exact) INCLUDE (id, last_updated);
DROP INDEX IF EXISTS search_token_value;
CREATE INDEX search_token_value ON search_token (project_id, resource_type, code, value, id) INCLUDE (system, last_updated);
DROP INDEX IF EXISTS search_reference_target;
CREATE INDEX search_reference_target ON search_reference (project_id, target_type, target_id, code, resource_type) INCLUDE (id, last_updated);
DROP INDEX IF EXISTS search_date_range;
CREATE INDEX search_date_range ON search_date (project_id, resource_type, code, start_at, end_at) INCLUDE (id, last_updated);
DROP INDEX IF EXISTS search_number_value;
CREATE INDEX search_number_value ON search_number (project_id, resource_type, code, value) INCLUDE (id, last_updated);
DROP INDEX IF EXISTS search_quantity_value;
CREATE INDEX search_quantity_value ON search_quantity (project_id, resource_type, code, value) INCLUDE (id, last_updated);
DROP INDEX IF EXISTS search_uri_value;
CREATE INDEX search_uri_value ON search_uri (project_id, resource_type, code, value text_pattern_ops) INCLUDE (id, last_updated);
