-- Resources, their history, and their search index. Every row carries its project id, and every
-- index leads with it: a project only ever reads its own rows.

CREATE TABLE IF NOT EXISTS project (
  id text PRIMARY KEY,
  name text NOT NULL,
  created timestamptz NOT NULL DEFAULT now()
);

-- The current version of each resource; a deleted resource keeps its row (deleted = true,
-- content null) so that a read answers 410 and a create cannot reuse the id.
CREATE TABLE IF NOT EXISTS resource (
  project_id text NOT NULL,
  resource_type text NOT NULL,
  id text NOT NULL,
  version_id bigint NOT NULL,
  last_updated timestamptz NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  content jsonb,
  PRIMARY KEY (project_id, resource_type, id)
);
CREATE INDEX IF NOT EXISTS resource_last_updated ON resource (project_id, resource_type, last_updated);

-- Every version, including the current one and deletions.
CREATE TABLE IF NOT EXISTS resource_history (
  project_id text NOT NULL,
  resource_type text NOT NULL,
  id text NOT NULL,
  version_id bigint NOT NULL,
  last_updated timestamptz NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  content jsonb,
  PRIMARY KEY (project_id, resource_type, id, version_id)
);

-- Search index: one table per search parameter type, one row per extracted value of the
-- current version. `code` is the search parameter code.
CREATE TABLE IF NOT EXISTS search_string (
  project_id text NOT NULL,
  resource_type text NOT NULL,
  id text NOT NULL,
  code text NOT NULL,
  value text NOT NULL -- lower case, accents removed
);
CREATE INDEX IF NOT EXISTS search_string_value ON search_string (project_id, resource_type, code, value text_pattern_ops);
CREATE INDEX IF NOT EXISTS search_string_id ON search_string (project_id, resource_type, id);

CREATE TABLE IF NOT EXISTS search_token (
  project_id text NOT NULL,
  resource_type text NOT NULL,
  id text NOT NULL,
  code text NOT NULL,
  system text,
  value text,
  text text -- display or text, lower case, accents removed, for :text
);
CREATE INDEX IF NOT EXISTS search_token_value ON search_token (project_id, resource_type, code, value, system);
CREATE INDEX IF NOT EXISTS search_token_id ON search_token (project_id, resource_type, id);

CREATE TABLE IF NOT EXISTS search_reference (
  project_id text NOT NULL,
  resource_type text NOT NULL,
  id text NOT NULL,
  code text NOT NULL,
  target_type text,
  target_id text,
  url text -- the reference as written, for absolute and canonical references
);
CREATE INDEX IF NOT EXISTS search_reference_target ON search_reference (project_id, target_type, target_id, code, resource_type);
CREATE INDEX IF NOT EXISTS search_reference_id ON search_reference (project_id, resource_type, id);

CREATE TABLE IF NOT EXISTS search_date (
  project_id text NOT NULL,
  resource_type text NOT NULL,
  id text NOT NULL,
  code text NOT NULL,
  start_at timestamptz, -- null: unbounded below
  end_at timestamptz    -- exclusive; null: unbounded above
);
CREATE INDEX IF NOT EXISTS search_date_range ON search_date (project_id, resource_type, code, start_at, end_at);
CREATE INDEX IF NOT EXISTS search_date_id ON search_date (project_id, resource_type, id);

CREATE TABLE IF NOT EXISTS search_number (
  project_id text NOT NULL,
  resource_type text NOT NULL,
  id text NOT NULL,
  code text NOT NULL,
  value numeric NOT NULL
);
CREATE INDEX IF NOT EXISTS search_number_value ON search_number (project_id, resource_type, code, value);
CREATE INDEX IF NOT EXISTS search_number_id ON search_number (project_id, resource_type, id);

CREATE TABLE IF NOT EXISTS search_quantity (
  project_id text NOT NULL,
  resource_type text NOT NULL,
  id text NOT NULL,
  code text NOT NULL,
  value numeric NOT NULL,
  system text,
  unit text -- Quantity.code, or Quantity.unit when there is no code
);
CREATE INDEX IF NOT EXISTS search_quantity_value ON search_quantity (project_id, resource_type, code, value);
CREATE INDEX IF NOT EXISTS search_quantity_id ON search_quantity (project_id, resource_type, id);

CREATE TABLE IF NOT EXISTS search_uri (
  project_id text NOT NULL,
  resource_type text NOT NULL,
  id text NOT NULL,
  code text NOT NULL,
  value text NOT NULL
);
CREATE INDEX IF NOT EXISTS search_uri_value ON search_uri (project_id, resource_type, code, value text_pattern_ops);
CREATE INDEX IF NOT EXISTS search_uri_id ON search_uri (project_id, resource_type, id);
