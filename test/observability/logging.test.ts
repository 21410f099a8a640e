import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startObservedServer, type ObservedServer } from './observed-server.js';

describe('request logging', () => {
  let server: ObservedServer;
  let rootToken: string;
  let project: { projectId: string; clientId: string; clientSecret: string };
  let token: string;
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}`, ...headers } });
  const lineOf = (requestId: string | null) =>
    server.lines().find((line) => line.msg === 'request' && line.requestId === requestId);

  beforeAll(async () => {
    server = await startObservedServer();
    rootToken = await server.token(ROOT.id, ROOT.secret);
    const created = await fetch(`${server.url}/admin/projects`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${rootToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Logged' }),
    });
    project = (await created.json()) as typeof project;
    token = await server.token(project.clientId, project.clientSecret);
  });
  afterAll(() => server?.stop());

  it('writes one JSON line per request with id, project, route pattern, status and duration', async () => {
    const response = await get('/fhir/R4/Patient/does-not-exist?name=secretive');
    expect(response.status).toBe(404);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const line = lineOf(requestId);
    expect(line).toMatchObject({
      level: 30,
      projectId: project.projectId,
      route: '/fhir/R4/:type/:id',
      method: 'GET',
      status: 404,
    });
    expect(typeof line?.durationMs).toBe('number');
    expect(JSON.stringify(line)).not.toContain('does-not-exist');
    expect(JSON.stringify(line)).not.toContain('secretive');
  });

  it('keeps a sane incoming X-Request-Id and replaces anything else', async () => {
    const kept = await get('/fhir/R4/metadata', { 'X-Request-Id': 'trace-42.a:b_c' });
    expect(kept.headers.get('x-request-id')).toBe('trace-42.a:b_c');
    expect(lineOf('trace-42.a:b_c')).toMatchObject({ route: '/fhir/R4/metadata', status: 200 });
    const replaced = await get('/fhir/R4/metadata', { 'X-Request-Id': 'no spaces {or} braces' });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs refused requests, unmatched routes included, without a project', async () => {
    const response = await fetch(`${server.url}/fhir/R4/Patient`);
    expect(response.status).toBe(401);
    const line = lineOf(response.headers.get('x-request-id'));
    expect(line).toMatchObject({ status: 401, method: 'GET' });
    expect(line).not.toHaveProperty('projectId');
  });

  it('never logs tokens, client secrets or token request query strings', async () => {
    await fetch(`${server.url}/oauth2/token?client_secret=query-secret-91d7`, {
      method: 'POST',
      headers: { Authorization: `Basic ${btoa(`${project.clientId}:${project.clientSecret}`)}` },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    await get('/fhir/R4/Patient?_count=1');
    const output = server.output.join('');
    expect(output).toContain('/oauth2/token');
    for (const secret of [ROOT.secret, project.clientSecret, 'query-secret-91d7', rootToken, token])
      expect(output).not.toContain(secret);
    expect(output).not.toMatch(/authorization|bearer|basic /i);
  });

  it("logs a bot's console output at debug level with the execution's trace id", async () => {
    const code = `export async function handler() { console.log('hello from the bot'); return 'ok'; }`;
    const created = await fetch(`${server.url}/fhir/R4/Bot`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/fhir+json' },
      body: JSON.stringify({ resourceType: 'Bot', name: 'logger', code }),
    });
    const bot = (await created.json()) as { id: string };
    const executed = await get(`/fhir/R4/Bot/${bot.id}/$execute`);
    expect(executed.status).toBe(200);
    const line = server.lines().find((l) => l.msg === 'bot console');
    expect(line).toMatchObject({ level: 20, bot: `Bot/${bot.id}`, status: 'ok' });
    expect(line?.traceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(line?.console).toContain('hello from the bot');
    await server.settled();
    const audits = await get(`/fhir/R4/AuditEvent?entity=Bot/${bot.id}`);
    expect(JSON.stringify(await audits.json())).toContain(String(line?.traceId));
  });
});
