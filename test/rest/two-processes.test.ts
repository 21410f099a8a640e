/**
 * Two server processes on one PostgreSQL database, many clients updating one resource with
 * If-Match (read, increment, write; retry on 412): every increment must survive. The project is
 * made through one process and its token used on both: signing keys live in the store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

const engines = await availableEngines();
const ROOT = { id: 'two-process-root', secret: 'two-process-secret' };
const CLIENTS = 8;
const INCREMENTS_PER_CLIENT = 10;

describe.runIf(engines.includes('postgres'))(
  'two server processes on one PostgreSQL database',
  () => {
    let database: TestDatabase;
    const processes: ChildProcess[] = [];
    const urls: string[] = [];

    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      for (let i = 0; i < 2; i++) {
        const child = spawn(process.execPath, ['--import', 'tsx', 'runtime/main.ts'], {
          env: {
            ...process.env,
            PORT: '0',
            HOST: '127.0.0.1',
            DATABASE_URL: database.url,
            // Two servers of one process each; test/server/processes.test.ts runs one of two.
            GRAPHIR_PROCESSES: '1',
            GRAPHIR_ROOT_CLIENT_ID: ROOT.id,
            GRAPHIR_ROOT_CLIENT_SECRET: ROOT.secret,
            // One public address for both, as behind a load balancer: each accepts the other's tokens.
            GRAPHIR_BASE_URL: 'http://graphir.test',
          },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        processes.push(child);
        urls.push(await listeningUrl(child));
      }
    }, 60_000);

    afterAll(async () => {
      for (const child of processes) child.kill('SIGTERM');
      await Promise.all(
        processes.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)),
      );
      await database?.drop();
    });

    it('loses no update under concurrent conditional updates', async () => {
      const rootToken = await token(urls[0], ROOT.id, ROOT.secret);
      const project = await fetch(`${urls[0]}/admin/projects`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${rootToken}` },
        body: JSON.stringify({ name: 'Counter' }),
      });
      const { clientId, clientSecret } = (await project.json()) as {
        clientId: string;
        clientSecret: string;
      };
      const bearer = `Bearer ${await token(urls[1], clientId, clientSecret)}`;
      const headers = { 'Content-Type': 'application/fhir+json', Authorization: bearer };

      const created = await fetch(`${urls[0]}/fhir/R4/Patient/counter`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ resourceType: 'Patient', id: 'counter', multipleBirthInteger: 0 }),
      });
      expect(created.status, await created.clone().text()).toBe(201);

      let conflicts = 0;
      const client = async (index: number) => {
        const base = `${urls[index % 2]}/fhir/R4`;
        for (let done = 0; done < INCREMENTS_PER_CLIENT;) {
          const read = await fetch(`${base}/Patient/counter`, { headers });
          const patient = (await read.json()) as {
            multipleBirthInteger: number;
            meta: { versionId: string };
          };
          const write = await fetch(`${base}/Patient/counter`, {
            method: 'PUT',
            headers: { ...headers, 'If-Match': `W/"${patient.meta.versionId}"` },
            body: JSON.stringify({
              ...patient,
              multipleBirthInteger: patient.multipleBirthInteger + 1,
            }),
          });
          if (write.status === 200) done++;
          else if (write.status === 412 || write.status === 409) conflicts++;
          else throw new Error(`unexpected ${write.status}: ${await write.text()}`);
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));

      const final = (await (
        await fetch(`${urls[1]}/fhir/R4/Patient/counter`, { headers })
      ).json()) as {
        multipleBirthInteger: number;
        meta: { versionId: string };
      };
      expect(final.multipleBirthInteger).toBe(CLIENTS * INCREMENTS_PER_CLIENT);
      expect(final.meta.versionId).toBe(String(CLIENTS * INCREMENTS_PER_CLIENT + 1));
      expect(conflicts).toBeGreaterThan(0); // the clients really did race
    }, 120_000);
  },
);

async function token(url: string, clientId: string, clientSecret: string): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  });
  const response = await fetch(`${url}/oauth2/token`, { method: 'POST', body: form });
  return ((await response.json()) as { access_token: string }).access_token;
}

async function listeningUrl(child: ChildProcess): Promise<string> {
  let output = '';
  for await (const chunk of child.stdout!) {
    output += String(chunk);
    const match = /listening on (http:\/\/\S+)/.exec(output);
    if (match) return match[1];
  }
  throw new Error(`the server exited before listening: ${output}`);
}
