/**
 * Projects, their clients and secrets. Every client belongs to one project, except the root
 * client, which creates projects.
 */
import { randomUUID } from 'node:crypto';
import type { ClientStore, SecretRow, SecretType } from '../store/client-store.js';
import type { Notices } from '../store/database.js';
import { Scopes } from './scopes.js';
import { hashSecret, newCredential, newSecret, verifySecret } from './secret-hash.js';

export interface Client {
  readonly id: string;
  readonly projectId?: string;
  readonly scopes: Scopes;
  readonly admin: boolean;
}

export interface NewClient {
  readonly clientId: string;
  readonly clientSecret: string;
}

const ROOT_ID = 'root';
/** Full access: what a project's first client and the root client are granted. */
export const FULL_ACCESS = 'system/*.cruds';
/**
 * How long "this client still exists" and a project's secrets are believed before the store is
 * asked again. A change made through any process drops them at once where they are kept (a
 * notice on ACCESS_CHANNEL); this bounds what a notice that never arrives could leave.
 */
const ACTIVE_SECONDS = 60;
/** Where changes to clients and secrets are announced to every process on the database. */
const ACCESS_CHANNEL = 'graphir_access';
/** Clients, and projects' secrets, kept at most each; past it the cache starts afresh. */
const CACHE_LIMIT = 10_000;

/** As Medplum's bots read them: `{ name, valueString | valueBoolean | valueInteger | valueDecimal }`. */
export type ProjectSecrets = Readonly<Record<string, { name: string } & Record<string, unknown>>>;

function secretValue({ value, type }: SecretRow): Record<string, string | boolean | number> {
  switch (type) {
    case 'Boolean':
      return { valueBoolean: value === 'true' };
    case 'Integer':
    case 'Decimal':
      return { [`value${type}`]: Number(value) };
    default:
      return { valueString: value };
  }
}

export class ClientRegistry {
  private readonly active = new Map<string, number>();
  /** Counts the notices heard. */
  private changes = 0;
  private readonly projectSecrets = new Map<
    string,
    { until: number; secrets: Promise<ProjectSecrets> }
  >();
  /** A real hash to compare against when the client does not exist, so timing tells nothing. */
  private readonly decoy: Promise<string> = hashSecret(newSecret());

  /**
   * `notices` carry deletions of clients and changes of secrets between the processes on one
   * database; while they are not heard, nothing is kept.
   */
  constructor(
    private readonly rows: ClientStore,
    private readonly notices: Notices,
  ) {
    notices.listen(ACCESS_CHANNEL, (payload) => this.forget(payload));
  }

  async createProject(name: string): Promise<NewClient & { projectId: string }> {
    const projectId = randomUUID();
    await this.rows.insertProject(projectId, name);
    return {
      projectId,
      ...(await this.createClient(projectId, `${name} administrator`, FULL_ACCESS, true)),
    };
  }

  async createClient(
    projectId: string,
    name: string,
    scope: string,
    admin = false,
  ): Promise<NewClient> {
    const normalized = Scopes.parse(scope).toString();
    const clientId = newCredential(12);
    const clientSecret = newSecret();
    await this.rows.insertClient({
      id: clientId,
      projectId,
      name,
      secretHash: await hashSecret(clientSecret),
      scope: normalized,
      admin,
    });
    return { clientId, clientSecret };
  }

  /** The client when the secret is right; undefined otherwise, in about the same time either way. */
  async authenticate(clientId: string, secret: string): Promise<Client | undefined> {
    const row = await this.rows.client(clientId);
    const ok = await verifySecret(secret, row?.secret_hash ?? (await this.decoy));
    if (!row || !ok) return undefined;
    return {
      id: row.id,
      ...(row.project_id ? { projectId: row.project_id } : {}),
      scopes: Scopes.parse(row.scope),
      admin: row.admin,
    };
  }

  /** Whether the client still exists; a deleted client's tokens stop working. */
  async isActive(clientId: string): Promise<boolean> {
    const until = this.active.get(clientId);
    if (until !== undefined && until > Date.now() && this.notices.hearing) return true;
    const changes = this.changes;
    if (!(await this.rows.clientExists(clientId))) {
      this.active.delete(clientId);
      return false;
    }
    // A notice that came while the store answered may be about this client: not kept then.
    if (changes !== this.changes) return true;
    if (this.active.size >= CACHE_LIMIT) this.active.clear();
    this.active.set(clientId, Date.now() + ACTIVE_SECONDS * 1000);
    return true;
  }

  /** Deletes the client; its tokens stop working on every process before this resolves here. */
  async deleteClient(projectId: string, clientId: string): Promise<boolean> {
    const deleted = await this.rows.deleteClient(projectId, clientId);
    if (deleted) await this.notices.notify(ACCESS_CHANNEL, `client:${clientId}`);
    return deleted;
  }

  projectExists(projectId: string): Promise<boolean> {
    return this.rows.projectExists(projectId);
  }

  /** `value`: a string, a boolean or a number (an integer when it is one). */
  async setSecret(
    projectId: string,
    name: string,
    value: string | boolean | number,
  ): Promise<'created' | 'updated'> {
    const type: SecretType =
      typeof value === 'string'
        ? 'String'
        : typeof value === 'boolean'
          ? 'Boolean'
          : Number.isInteger(value)
            ? 'Integer'
            : 'Decimal';
    const result = await this.rows.putSecret(projectId, { name, value: String(value), type });
    await this.notices.notify(ACCESS_CHANNEL, `secrets:${projectId}`);
    return result;
  }

  /** A project's secrets as bots see them: `{ name: { name, valueString } }` (or valueBoolean…). */
  secrets(projectId: string): Promise<ProjectSecrets> {
    const cached = this.projectSecrets.get(projectId);
    if (cached && cached.until > Date.now() && this.notices.hearing) return cached.secrets;
    const secrets = this.loadSecrets(projectId);
    if (this.projectSecrets.size >= CACHE_LIMIT) this.projectSecrets.clear();
    const entry = { until: Date.now() + ACTIVE_SECONDS * 1000, secrets };
    this.projectSecrets.set(projectId, entry);
    // A failed read is not remembered.
    secrets.catch(() => {
      if (this.projectSecrets.get(projectId) === entry) this.projectSecrets.delete(projectId);
    });
    return secrets;
  }

  /** Drops what a notice says changed; everything when notices may have been missed. */
  private forget(payload: string | undefined): void {
    this.changes++;
    if (payload === undefined) {
      this.active.clear();
      this.projectSecrets.clear();
    } else if (payload.startsWith('client:')) {
      this.active.delete(payload.slice('client:'.length));
    } else if (payload.startsWith('secrets:')) {
      this.projectSecrets.delete(payload.slice('secrets:'.length));
    }
  }

  private async loadSecrets(projectId: string): Promise<ProjectSecrets> {
    const rows = await this.rows.secrets(projectId);
    return Object.freeze(
      Object.fromEntries(
        rows.map((row) => [row.name, Object.freeze({ name: row.name, ...secretValue(row) })]),
      ),
    );
  }

  /**
   * The root client: from GRAPHIR_ROOT_CLIENT_ID / GRAPHIR_ROOT_CLIENT_SECRET when set (the
   * stored hash follows the secret), else made once with a random secret that is returned so
   * that the caller can print it — the store keeps only its hash.
   */
  async ensureRootClient(
    id: string | undefined,
    secret: string | undefined,
  ): Promise<NewClient | undefined> {
    const root = (clientId: string, secretHash: string) => ({
      id: clientId,
      projectId: null,
      name: 'root',
      secretHash,
      scope: FULL_ACCESS,
      admin: true,
    });
    if (id && secret) {
      await this.rows.putRootClient(root(id, await hashSecret(secret)));
      return undefined;
    }
    if (await this.rows.rootClientExists()) return undefined;
    const clientSecret = newSecret();
    const inserted = await this.rows.insertClientIfAbsent(
      root(ROOT_ID, await hashSecret(clientSecret)),
    );
    return inserted ? { clientId: ROOT_ID, clientSecret } : undefined;
  }
}
