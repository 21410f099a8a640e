-- Clients (OAuth2 client credentials), the keys that sign their tokens, and project secrets.

-- project_id null: the root client, which administers projects but reads no FHIR data.
CREATE TABLE IF NOT EXISTS client (
  id text PRIMARY KEY,
  project_id text REFERENCES project (id),
  name text NOT NULL,
  secret_hash text NOT NULL,
  scope text NOT NULL,
  admin boolean NOT NULL DEFAULT false,
  created timestamptz NOT NULL DEFAULT now(),
  deleted timestamptz
);
CREATE INDEX IF NOT EXISTS client_project ON client (project_id);

-- Kept in the store so that every server process signs and verifies with the same keys.
CREATE TABLE IF NOT EXISTS signing_key (
  kid text PRIMARY KEY,
  algorithm text NOT NULL,
  private_jwk jsonb NOT NULL,
  public_jwk jsonb NOT NULL,
  created timestamptz NOT NULL DEFAULT now()
);

-- Secrets a project's bots read as event.secrets.
CREATE TABLE IF NOT EXISTS project_secret (
  project_id text NOT NULL REFERENCES project (id),
  name text NOT NULL,
  value text NOT NULL,
  updated timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, name)
);
