/**
 * The rows of projects, their clients and their secrets (migrations/003-access.sql). Access
 * rules — hashing secrets, scopes, what is cached — live in runtime/access/; this is storage.
 */
import type { Database } from './database.js';

export interface ClientRow {
  readonly id: string;
  readonly project_id: string | null;
  readonly secret_hash: string;
  readonly scope: string;
  readonly admin: boolean;
}

export interface NewClientRow {
  readonly id: string;
  /** Null for the root client. */
  readonly projectId: string | null;
  readonly name: string;
  readonly secretHash: string;
  readonly scope: string;
  readonly admin: boolean;
}

const INSERT_CLIENT =
  'INSERT INTO client (id, project_id, name, secret_hash, scope, admin) VALUES ($1, $2, $3, $4, $5, $6)';

export class ClientStore {
  constructor(private readonly db: Database) {}

  async insertProject(id: string, name: string): Promise<void> {
    await this.db.query('INSERT INTO project (id, name) VALUES ($1, $2)', [id, name]);
  }

  async projectExists(projectId: string): Promise<boolean> {
    const { rows } = await this.db.query('SELECT 1 FROM project WHERE id = $1', [projectId]);
    return rows.length > 0;
  }

  async insertClient(client: NewClientRow): Promise<void> {
    await this.db.query(INSERT_CLIENT, valuesOf(client));
  }

  /** A client that is not deleted. */
  async client(clientId: string): Promise<ClientRow | undefined> {
    const { rows } = await this.db.query<ClientRow>(
      'SELECT id, project_id, secret_hash, scope, admin FROM client WHERE id = $1 AND deleted IS NULL',
      [clientId],
    );
    return rows[0];
  }

  async clientExists(clientId: string): Promise<boolean> {
    const { rows } = await this.db.query(
      'SELECT 1 FROM client WHERE id = $1 AND deleted IS NULL',
      [clientId],
      { prepared: 'fixed' },
    );
    return rows.length > 0;
  }

  /** Marks the project's client deleted; false when it was not there. */
  async deleteClient(projectId: string, clientId: string): Promise<boolean> {
    const { rows } = await this.db.query(
      'UPDATE client SET deleted = now() WHERE id = $1 AND project_id = $2 AND deleted IS NULL RETURNING id',
      [clientId, projectId],
    );
    return rows.length > 0;
  }

  async rootClientExists(): Promise<boolean> {
    const { rows } = await this.db.query(
      'SELECT 1 FROM client WHERE project_id IS NULL AND deleted IS NULL LIMIT 1',
    );
    return rows.length > 0;
  }

  /** The root client with this id and secret, whatever was stored before under its id. */
  async putRootClient(client: NewClientRow): Promise<void> {
    await this.db.query(
      `${INSERT_CLIENT}
       ON CONFLICT (id) DO UPDATE SET secret_hash = excluded.secret_hash, deleted = NULL WHERE client.project_id IS NULL`,
      valuesOf(client),
    );
  }

  /** False when a client with that id exists already. */
  async insertClientIfAbsent(client: NewClientRow): Promise<boolean> {
    const { rows } = await this.db.query(
      `${INSERT_CLIENT} ON CONFLICT (id) DO NOTHING RETURNING id`,
      valuesOf(client),
    );
    return rows.length > 0;
  }

  async putSecret(projectId: string, secret: SecretRow): Promise<'created' | 'updated'> {
    const { rows } = await this.db.query<{ inserted: boolean }>(
      `INSERT INTO project_secret (project_id, name, value, value_type) VALUES ($1, $2, $3, $4)
       ON CONFLICT (project_id, name)
       DO UPDATE SET value = excluded.value, value_type = excluded.value_type, updated = now()
       RETURNING (xmax = 0) AS inserted`,
      [projectId, secret.name, secret.value, secret.type],
    );
    return rows[0].inserted ? 'created' : 'updated';
  }

  /** The project's secrets, by name. */
  async secrets(projectId: string): Promise<SecretRow[]> {
    const { rows } = await this.db.query<SecretRow>(
      'SELECT name, value, value_type AS type FROM project_secret WHERE project_id = $1 ORDER BY name',
      [projectId],
      { prepared: 'fixed' },
    );
    return rows;
  }
}

/** A secret as stored: its value as text, and what the text is. */
export interface SecretRow {
  readonly name: string;
  readonly value: string;
  readonly type: SecretType;
}

export type SecretType = 'String' | 'Boolean' | 'Integer' | 'Decimal';

function valuesOf(client: NewClientRow): unknown[] {
  return [client.id, client.projectId, client.name, client.secretHash, client.scope, client.admin];
}
