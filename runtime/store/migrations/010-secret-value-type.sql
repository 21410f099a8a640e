-- A project secret is a string, a boolean, an integer or a decimal, as Medplum's are: bots read
-- it as `valueString`, `valueBoolean`, `valueInteger` or `valueDecimal`. `value` keeps its text.
ALTER TABLE project_secret ADD COLUMN IF NOT EXISTS value_type text NOT NULL DEFAULT 'String';
