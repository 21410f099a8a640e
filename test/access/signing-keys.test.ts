/**
 * Tokens that name a signing key the server does not know send it to the store for keys at most
 * once per interval, however many arrive: made-up kids cost no more than bad signatures.
 */
import { generateKeyPair, SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingDatabase } from '../support/counting-database.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe.each(await availableEngines())('unknown kids on %s', (engine) => {
  let server: TestServer;
  let keyReads = 0;
  beforeAll(async () => {
    const database = await createTestDatabase(engine);
    const db = countingDatabase(database.db, (text) => {
      if (text.includes('FROM signing_key')) keyReads++;
    });
    server = await startTestServer(engine, {}, { ...database, db });
  });
  afterAll(() => server?.stop());

  it('are refused with 401, the keys read again at most once', async () => {
    const other = await generateKeyPair('ES256');
    const claims = decodeJwt(server.project.token);
    keyReads = 0;
    for (let i = 0; i < 40; i++) {
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: `made-up-${i}` })
        .sign(other.privateKey);
      const response = await server.fhir('/Patient', { token });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect(keyReads).toBeLessThanOrEqual(1);
    // The server's own tokens still work.
    expect((await server.fhir('/Patient')).status).toBe(200);
  });
});
