-- :exact compares the value as written (case and accents count), which the normalized column
-- cannot answer.
ALTER TABLE search_string ADD COLUMN IF NOT EXISTS exact text;
CREATE INDEX IF NOT EXISTS search_string_exact ON search_string (project_id, resource_type, code, exact);
