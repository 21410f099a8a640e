-- The text columns of the resource and index tables compare byte by byte (the "C" collation),
-- as ids, codes and token values are meant to. Under a database's default collation every
-- comparison in an index descent, a sort or a merge join went through the C library's locale
-- rules (strcoll), even for C.UTF-8; and searches already sorted with COLLATE "C", which the
-- indexes' order then did not match. Equality means the same under both, so no search answers
-- differently. Each table's indexes are built anew, in the migration's transaction: on a large
-- database, writes wait for it at the first start of this version.

ALTER TABLE resource
  ALTER COLUMN project_id TYPE text COLLATE "C",
  ALTER COLUMN resource_type TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C";
ALTER TABLE resource_history
  ALTER COLUMN project_id TYPE text COLLATE "C",
  ALTER COLUMN resource_type TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C";
ALTER TABLE search_date
  ALTER COLUMN project_id TYPE text COLLATE "C",
  ALTER COLUMN resource_type TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN code TYPE text COLLATE "C";
ALTER TABLE search_number
  ALTER COLUMN project_id TYPE text COLLATE "C",
  ALTER COLUMN resource_type TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN code TYPE text COLLATE "C";
ALTER TABLE search_quantity
  ALTER COLUMN project_id TYPE text COLLATE "C",
  ALTER COLUMN resource_type TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN code TYPE text COLLATE "C",
  ALTER COLUMN system TYPE text COLLATE "C",
  ALTER COLUMN unit TYPE text COLLATE "C";
ALTER TABLE search_reference
  ALTER COLUMN project_id TYPE text COLLATE "C",
  ALTER COLUMN resource_type TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN code TYPE text COLLATE "C",
  ALTER COLUMN target_type TYPE text COLLATE "C",
  ALTER COLUMN target_id TYPE text COLLATE "C",
  ALTER COLUMN url TYPE text COLLATE "C";
ALTER TABLE search_string
  ALTER COLUMN project_id TYPE text COLLATE "C",
  ALTER COLUMN resource_type TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN code TYPE text COLLATE "C",
  ALTER COLUMN value TYPE text COLLATE "C",
  ALTER COLUMN exact TYPE text COLLATE "C";
ALTER TABLE search_token
  ALTER COLUMN project_id TYPE text COLLATE "C",
  ALTER COLUMN resource_type TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN code TYPE text COLLATE "C",
  ALTER COLUMN system TYPE text COLLATE "C",
  ALTER COLUMN value TYPE text COLLATE "C",
  ALTER COLUMN text TYPE text COLLATE "C";
ALTER TABLE search_uri
  ALTER COLUMN project_id TYPE text COLLATE "C",
  ALTER COLUMN resource_type TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN code TYPE text COLLATE "C",
  ALTER COLUMN value TYPE text COLLATE "C";
