/**
 * Search SQL against real databases: PGlite always, PostgreSQL too when
 * GRAPHIR_TEST_DATABASE_URL is set (in a fresh schema, dropped afterwards). The data set is
 * inserted by hand, index rows included, so these tests depend only on the SQL builders; the
 * kept token counts come from migration 014's backfill of those rows, as on a database that held
 * them before it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSearchDefinition } from '../../generated/search/index.js';
import {
  parseCriterion,
  type SearchCriterion,
} from '../../runtime/search/parse-search-arguments.js';
import {
  buildCountQuery,
  buildIncludeQuery,
  buildRevIncludeQuery,
  buildSearchQuery,
  UnsupportedSearchError,
  type SqlQuery,
} from '../../runtime/store/search-sql.js';
import { type SortKey } from '../../runtime/store/search-query.js';
import { successor } from '../../runtime/store/search-sql-criteria.js';

/** Every migration, in name order, as the server applies them. */
const MIGRATIONS_DIR = new URL('../../runtime/store/migrations/', import.meta.url);
const MIGRATION_NAMES = readdirSync(MIGRATIONS_DIR)
  .filter((name) => name.endsWith('.sql'))
  .sort();
const TOKEN_COUNTS = '014-token-counts.sql';
const migrations = (names: string[]) =>
  names.map((name) => readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8'));
/** The migrations before the data set is inserted, and those after it. */
const BEFORE_SEED = migrations(MIGRATION_NAMES.filter((name) => name < TOKEN_COUNTS));
const AFTER_SEED = migrations(MIGRATION_NAMES.filter((name) => name >= TOKEN_COUNTS));

type Row = Record<string, unknown>;

interface TestDatabase {
  query(query: SqlQuery): Promise<Row[]>;
  /** Runs a migration's statements. */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

async function openPglite(): Promise<TestDatabase> {
  const db = await PGlite.create();
  return {
    query: async ({ text, values }) => (await db.query<Row>(text, [...values])).rows,
    exec: async (sql) => void (await db.exec(sql)),
    close: () => db.close(),
  };
}

async function openPostgres(url: string): Promise<TestDatabase> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const schema = `search_sql_test_${process.pid}_${Date.now()}`;
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.query(`SET search_path TO ${schema}`);
  return {
    query: async ({ text, values }) => (await client.query<Row>(text, [...values])).rows,
    exec: async (sql) => void (await client.query(sql)),
    close: async () => {
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

// --- The data set ---

const HOUR = 3_600_000;
const NOW = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();
/** The current second, as a client would write it: `2025-06-01T12:34:56Z`. */
const NOW_SECOND = `${iso(NOW).slice(0, 19)}Z`;
const INJECTION = `'; DROP TABLE resource; --`;

interface Seed {
  project?: string;
  type: string;
  id: string;
  lastUpdated: string;
  deleted?: boolean;
  /** value is the normalized text, exact the text as written. */
  string?: [code: string, value: string, exact: string][];
  token?: [code: string, system: string | null, value: string | null, text: string | null][];
  reference?: [code: string, type: string | null, id: string | null, url: string | null][];
  date?: [code: string, start: string | null, end: string | null][];
  number?: [code: string, value: number][];
  quantity?: [code: string, value: number, system: string | null, unit: string | null][];
  uri?: [code: string, value: string][];
}

const UCUM = 'http://unitsofmeasure.org';
const LOINC = 'http://loinc.org';
const GENDER = 'http://hl7.org/fhir/administrative-gender';
const SD = 'http://hl7.org/fhir/StructureDefinition';

const PATIENTS: Seed[] = [
  {
    type: 'Patient',
    id: 'pat-eve',
    lastUpdated: '2024-01-01T00:00:00Z',
    string: [
      ['name', 'eve', 'Eve'],
      ['name', 'everywoman', 'Everywoman'],
      ['given', 'eve', 'Eve'],
      ['family', 'everywoman', 'Everywoman'],
    ],
    token: [
      ['gender', GENDER, 'female', 'female'],
      ['identifier', 'urn:mrn', '123', 'medical record number'],
      ['active', null, 'true', null],
    ],
    reference: [
      ['general-practitioner', 'Practitioner', 'dr1', null],
      ['organization', 'Organization', 'org9', 'http://other.org/fhir/Organization/org9'],
    ],
    date: [['birthdate', '1980-05-14T00:00:00Z', '1980-05-15T00:00:00Z']],
  },
  {
    type: 'Patient',
    id: 'pat-jose',
    lastUpdated: '2024-01-02T00:00:00Z',
    string: [
      ['name', 'jose', 'José'],
      ['name', 'nunez', 'Núñez'],
      ['family', 'nunez', 'Núñez'],
    ],
    token: [
      ['gender', GENDER, 'male', 'male'],
      ['identifier', 'urn:mrn', '456', null],
      ['identifier', null, '789', null],
      ['active', null, 'false', null],
    ],
    reference: [['general-practitioner', 'Practitioner', 'dr2', null]],
    date: [['birthdate', '1975-01-01T00:00:00Z', '1976-01-01T00:00:00Z']],
  },
  {
    type: 'Patient',
    id: 'pat-meta',
    lastUpdated: '2024-01-03T00:00:00Z',
    string: [
      ['name', "o'brien", "O'Brien"],
      ['name', '50%_\\off', '50%_\\off'],
      ['name', INJECTION.toLowerCase(), INJECTION],
    ],
    token: [['gender', GENDER, 'other', 'other']],
    date: [['birthdate', '2000-02-29T00:00:00Z', '2000-03-01T00:00:00Z']],
  },
  {
    type: 'Patient',
    id: 'pat-plain',
    lastUpdated: '2024-01-04T00:00:00Z',
    string: [
      ['name', '500 off', '500 off'],
      ['name', '50a0bc', '50a0bc'],
      ['name', '5xyz', '5xyz'],
    ],
    token: [['gender', GENDER, 'female', 'female']],
    date: [['birthdate', '1980-05-01T00:00:00Z', '1980-06-01T00:00:00Z']],
  },
  {
    type: 'Patient',
    id: 'pat-nobirth',
    lastUpdated: '2024-01-05T00:00:00Z',
    // Prefixes that end at the edges of what a code point can be followed by (startsWith).
    string: [
      ['name', 'nobody', 'Nobody'],
      ['name', 'zz\uD7FFa', 'zz\uD7FFa'],
      ['name', 'zz\uE000', 'zz\uE000'],
      ['name', 'zz\u{10FFFF}q', 'zz\u{10FFFF}q'],
      ['name', 'z{', 'z{'],
    ],
    token: [['identifier', 'urn:other', '123', null]],
  },
  // Deleted, and the newest: the store keeps no index rows for it (write-versions.ts removes them,
  // migrations/006 removed any left over), yet a read by id or a reference may name it.
  {
    type: 'Patient',
    id: 'pat-deleted',
    lastUpdated: '2024-01-06T00:00:00Z',
    deleted: true,
  },
];

const OBSERVATIONS: Seed[] = [
  {
    type: 'Observation',
    id: 'obs-1',
    lastUpdated: '2024-02-01T00:00:00Z',
    reference: [
      ['subject', 'Patient', 'pat-eve', null],
      ['patient', 'Patient', 'pat-eve', null],
      ['performer', 'Patient', 'pat-deleted', null],
    ],
    token: [['code', LOINC, '8867-4', 'heart rate']],
    quantity: [['value-quantity', 72, UCUM, '/min']],
    date: [['date', '2023-06-01T10:00:00Z', '2023-06-01T10:00:01Z']],
    uri: [['_profile', `${SD}/vitalsigns`]],
  },
  {
    type: 'Observation',
    id: 'obs-2',
    lastUpdated: '2024-02-02T00:00:00Z',
    reference: [['subject', 'Patient', 'pat-jose', null]],
    token: [['code', LOINC, '29463-7', 'body weight']],
    quantity: [['value-quantity', 80.5, UCUM, 'kg']],
    date: [['date', '2023-06-01T00:00:00Z', null]],
    uri: [['_profile', `${SD}/bodyweight`]],
  },
  {
    type: 'Observation',
    id: 'obs-3',
    lastUpdated: '2024-02-03T00:00:00Z',
    reference: [
      ['subject', 'Patient', 'ext1', 'http://example.org/fhir/Patient/ext1'],
      ['based-on', null, null, 'http://example.org/fhir/ServiceRequest/sr1|2'],
    ],
    token: [['code', null, 'abc', null]],
    quantity: [['value-quantity', 100, null, 'mg']],
    date: [['date', null, '2020-01-01T00:00:00Z']],
    uri: [['_profile', 'http://hl7.org/fhir']],
  },
  {
    type: 'Observation',
    id: 'obs-4',
    lastUpdated: '2024-02-04T00:00:00Z',
    reference: [['focus', null, null, 'urn:uuid:5a3e0f4c-0000-4000-8000-000000000001']],
    token: [['code', null, null, 'free text']],
    date: [['value-date', iso(NOW + 20 * HOUR), iso(NOW + 20 * HOUR + 1000)]],
  },
  {
    type: 'Observation',
    id: 'obs-5',
    lastUpdated: '2024-02-05T00:00:00Z',
    reference: [['subject', 'Group', 'pat-eve', null]],
    token: [['code', LOINC, '29463-7', 'body weight']],
    quantity: [['value-quantity', 80, UCUM, 'kg']],
    date: [
      ['date', '2023-06-15T00:00:00Z', '2023-06-16T00:00:00Z'],
      ['value-date', iso(NOW + 30 * HOUR), iso(NOW + 30 * HOUR + 1000)],
    ],
    uri: [['_profile', 'http://example.org/profiles/50%_x']],
  },
  {
    type: 'Observation',
    id: 'obs-deleted',
    lastUpdated: '2024-02-06T00:00:00Z',
    deleted: true,
  },
];

const RISK_ASSESSMENTS: Seed[] = [
  ['ra-100', 100],
  ['ra-99.6', 99.6],
  ['ra-101', 101],
  ['ra-0', 0],
  ['ra-111', 111],
  ['ra-85', 85],
  ['ra-none', undefined],
].map(([id, value], index) => ({
  type: 'RiskAssessment',
  id: id as string,
  lastUpdated: `2024-03-0${index + 1}T00:00:00Z`,
  ...(value !== undefined && { number: [['probability', value as number]] }),
}));

const OTHERS: Seed[] = [
  { type: 'Practitioner', id: 'dr1', lastUpdated: '2024-04-01T00:00:00Z' },
  { type: 'Group', id: 'pat-eve', lastUpdated: '2024-04-02T00:00:00Z' },
  // Another project, with ids that also exist in p1: none of it may ever show in p1.
  ...[
    { type: 'Patient', id: 'pat-eve', string: [['name', 'eve', 'Eve']] },
    { type: 'Patient', id: 'pat-p2', string: [['name', 'eve', 'Eve']] },
    { type: 'Practitioner', id: 'dr1' },
    {
      type: 'Observation',
      id: 'obs-p2',
      reference: [['subject', 'Patient', 'pat-eve', null]],
      token: [['code', LOINC, '29463-7', 'body weight']],
    },
  ].map((seed) => ({ ...seed, project: 'p2', lastUpdated: '2024-05-01T00:00:00Z' }) as Seed),
];

const INDEX_COLUMNS = {
  string: ['value', 'exact'],
  token: ['system', 'value', 'text'],
  reference: ['target_type', 'target_id', 'url'],
  date: ['start_at', 'end_at'],
  number: ['value'],
  quantity: ['value', 'system', 'unit'],
  uri: ['value'],
} as const;

/** Rows carry no project id: each project's seeds have a version of their own to tell them apart. */
const VERSION_IN: Record<string, string> = { p1: '1', p2: '2' };

async function insert(db: TestDatabase, seed: Seed): Promise<void> {
  const project = seed.project ?? 'p1';
  const key = [project, seed.type, seed.id];
  const content = seed.deleted ? null : { resourceType: seed.type, id: seed.id, language: project };
  await db.query({
    text: `INSERT INTO resource (project_id, resource_type, id, version_id, last_updated, deleted, content)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    values: [...key, VERSION_IN[project], seed.lastUpdated, seed.deleted ?? false, content],
  });
  for (const [type, columns] of Object.entries(INDEX_COLUMNS)) {
    for (const [code, ...values] of seed[type as keyof typeof INDEX_COLUMNS] ?? []) {
      const placeholders = columns.map((_, i) => `$${i + 7}`).join(', ');
      await db.query({
        text: `INSERT INTO search_${type} (project_id, resource_type, id, version_id, last_updated, code, ${columns.join(', ')})
               VALUES ($1, $2, $3, $4, $5, $6, ${placeholders})`,
        values: [...key, VERSION_IN[project], seed.lastUpdated, code, ...values],
      });
    }
  }
}

// --- Running queries ---

/** Criteria from a FHIR query string (`name:exact=Eve&gender=female`), parsed as the REST API does. */
function criteria(type: string, query: string): SearchCriterion[] {
  const definition = loadSearchDefinition(type);
  if (query === '') return [];
  return query.split('&').map((part) => {
    const argument = part.slice(0, part.indexOf('='));
    const [code, modifier] = argument.split(':');
    return parseCriterion(definition, code, modifier, part.slice(argument.length + 1), argument);
  });
}

function search(type: string, query: string, sort: SortKey[] = [], count = 100, offset = 0) {
  return buildSearchQuery('p1', loadSearchDefinition(type), criteria(type, query), {
    count,
    offset,
    sort,
  });
}

/** `_sort=-birthdate,name` as sort keys. */
function sortKeys(text: string): SortKey[] {
  return text
    .split(',')
    .map((key) => ({ code: key.replace(/^-/, ''), descending: key.startsWith('-') }));
}

const ids = (rows: Row[]) => rows.map((row) => row.id as string);
const keys = (rows: Row[]) => rows.map((row) => `${row.resource_type}/${row.id}`);
const sorted = (list: string[]) => [...list].sort();

type MatchCase = [query: string, want: string[]];

const PATIENT_CASES: MatchCase[] = [
  // string: prefix, case- and accent-insensitive
  ['name=eve', ['pat-eve']],
  ['name=EVE', ['pat-eve']],
  ['name=Év', ['pat-eve']],
  ['name=José', ['pat-jose']],
  ['name=NÚÑ', ['pat-jose']],
  ['name=x', []],
  ['name:contains=rywo', ['pat-eve']],
  ['name:contains=ÑE', ['pat-jose']],
  // string:exact: the text as written, case- and accent-sensitive
  ['name:exact=Eve', ['pat-eve']],
  ['name:exact=Ev', []],
  ['name:exact=eve', []],
  ['name:exact=EVE', []],
  ['name:exact=Everywoman', ['pat-eve']],
  ['name:exact=José', ['pat-jose']],
  ['name:exact=Jose', []],
  ['name:exact=jose', []],
  ['name:exact=Núñez', ['pat-jose']],
  ['name:exact=Nunez', []],
  ['name:exact=núñez', []],
  ['name:exact=Eve,José', ['pat-eve', 'pat-jose']],
  ['given:exact=Eve', ['pat-eve']],
  ['family:exact=Eve', []],
  ['family:missing=true', ['pat-meta', 'pat-nobirth', 'pat-plain']],
  ['family:missing=false', ['pat-eve', 'pat-jose']],
  // OR within a value, AND across criteria
  ['name=eve,jose', ['pat-eve', 'pat-jose']],
  ['name=eve&gender=female', ['pat-eve']],
  ['name=eve&name=everywoman', ['pat-eve']],
  ['name=eve&name=jose', []],
  ['gender=female,male&birthdate=lt1980', ['pat-jose']],
  // Prefixes as ranges: the text after every text that starts with the prefix ends them
  ['name=zz', ['pat-nobirth']],
  ['name=zz\uD7FF', ['pat-nobirth']],
  ['name=zz\uE000', ['pat-nobirth']],
  ['name=zz\u{10FFFF}', ['pat-nobirth']],
  ['name=zz\u{10FFFF}q', ['pat-nobirth']],
  ['name=zz\u{10FFFF}r', []],
  ['name=z{', ['pat-nobirth']],
  ['name=zz\uD7FFb', []],
  // SQL and LIKE metacharacters are plain text
  ['name=50%', ['pat-meta']],
  ['name=5_', []],
  ['name:contains=%', ['pat-meta']],
  ['name:contains=_', ['pat-meta']],
  ['name:contains=%_', ['pat-meta']],
  ['name:contains=\\\\', ['pat-meta']],
  ['name=50%_\\\\off', ['pat-meta']],
  [`name=${INJECTION}`, ['pat-meta']],
  [`name:exact=${INJECTION}`, ['pat-meta']],
  [`name:contains=${INJECTION}`, ['pat-meta']],
  ["name:exact=O'Brien", ['pat-meta']],
  ["name:exact=o'brien", []],
  [`name:exact=${INJECTION.toLowerCase()}`, []],
  [`gender=${INJECTION}`, []],
  // token
  ['gender=female', ['pat-eve', 'pat-plain']],
  [`gender=${GENDER}|female`, ['pat-eve', 'pat-plain']],
  ['gender=http://wrong|female', []],
  [`gender=${GENDER}|`, ['pat-eve', 'pat-jose', 'pat-meta', 'pat-plain']],
  ['identifier=123', ['pat-eve', 'pat-nobirth']],
  ['identifier=urn:mrn|123', ['pat-eve']],
  ['identifier=|789', ['pat-jose']],
  ['identifier=|123', []],
  ['identifier=urn:mrn|123,urn:mrn|456', ['pat-eve', 'pat-jose']],
  ['gender:not=female', ['pat-jose', 'pat-meta', 'pat-nobirth']],
  ['gender:not=female,male', ['pat-meta', 'pat-nobirth']],
  [`gender:not=${GENDER}|`, ['pat-nobirth']],
  ['identifier:text=medical', ['pat-eve']],
  ['identifier:text=MÉDICAL REC', ['pat-eve']],
  ['identifier:text=record', []],
  ['gender:missing=true', ['pat-nobirth']],
  ['gender:missing=false', ['pat-eve', 'pat-jose', 'pat-meta', 'pat-plain']],
  ['active=true', ['pat-eve']],
  // _id
  ['_id=pat-eve,pat-jose', ['pat-eve', 'pat-jose']],
  ['_id=pat-deleted', []],
  ['_id=pat-p2', []],
  [`_id=${INJECTION}`, []],
  ['_id:not=pat-eve', ['pat-jose', 'pat-meta', 'pat-nobirth', 'pat-plain']],
  ['_id:missing=false', ['pat-eve', 'pat-jose', 'pat-meta', 'pat-nobirth', 'pat-plain']],
  ['_id:missing=true', []],
  // reference
  ['general-practitioner=Practitioner/dr1', ['pat-eve']],
  ['organization=Organization/org9', ['pat-eve']],
  ['organization=http://other.org/fhir/Organization/org9', ['pat-eve']],
  ['general-practitioner:missing=true', ['pat-meta', 'pat-nobirth', 'pat-plain']],
  // date ranges: eve [1980-05-14, +1 day), jose 1975, meta 2000-02-29, plain 1980-05
  ['birthdate=1980-05-14', ['pat-eve']],
  ['birthdate=eq1980-05-14', ['pat-eve']],
  ['birthdate=1980-05', ['pat-eve', 'pat-plain']],
  ['birthdate=1980', ['pat-eve', 'pat-plain']],
  ['birthdate=1980-05-14T00:00:00Z', []],
  ['birthdate=ne1980-05-14', ['pat-jose', 'pat-meta', 'pat-plain']],
  ['birthdate=gt1980-05-14', ['pat-meta', 'pat-plain']],
  ['birthdate=lt1980-05-14', ['pat-jose', 'pat-plain']],
  ['birthdate=ge1980-05-14', ['pat-eve', 'pat-meta', 'pat-plain']],
  ['birthdate=le1980-05-14', ['pat-eve', 'pat-jose', 'pat-plain']],
  ['birthdate=sa1980-05-14', ['pat-meta']],
  ['birthdate=eb1980-05-14', ['pat-jose']],
  ['birthdate=ap1982', ['pat-eve', 'pat-plain']],
  ['birthdate=ap1990', []],
  ['birthdate=1975,2000', ['pat-jose', 'pat-meta']],
  ['birthdate=ge1980&birthdate=lt1981', ['pat-eve', 'pat-plain']],
  ['birthdate=9999', []],
  ['birthdate=lt9999', ['pat-eve', 'pat-jose', 'pat-meta', 'pat-plain']],
  ['birthdate=gt0001', ['pat-eve', 'pat-jose', 'pat-meta', 'pat-plain']],
  ['birthdate=ap0001', []],
  ['birthdate:missing=true', ['pat-nobirth']],
  // _lastUpdated: eve 2024-01-01, jose 01-02, meta 01-03, plain 01-04, nobirth 01-05 (midnight UTC)
  ['_lastUpdated=2024-01-02', ['pat-jose']],
  ['_lastUpdated=2024-01-01T00:00:00Z', ['pat-eve']],
  ['_lastUpdated=2024-01-01T00:00:00.000Z', ['pat-eve']],
  ['_lastUpdated=2024-01-01T00:00:00.001Z', []],
  ['_lastUpdated=ne2024-01-02', ['pat-eve', 'pat-meta', 'pat-nobirth', 'pat-plain']],
  ['_lastUpdated=gt2024-01-03', ['pat-nobirth', 'pat-plain']],
  ['_lastUpdated=lt2024-01-02', ['pat-eve']],
  ['_lastUpdated=ge2024-01-04', ['pat-nobirth', 'pat-plain']],
  ['_lastUpdated=le2024-01-02', ['pat-eve', 'pat-jose']],
  ['_lastUpdated=sa2024-01-04', ['pat-nobirth']],
  ['_lastUpdated=eb2024-01-02', ['pat-eve']],
  ['_lastUpdated=2024-01-01,2024-01-05', ['pat-eve', 'pat-nobirth']],
  ['_lastUpdated:missing=true', []],
  // no criteria: everything of the type in the project, nothing deleted
  ['', ['pat-eve', 'pat-jose', 'pat-meta', 'pat-nobirth', 'pat-plain']],
];

const OBSERVATION_CASES: MatchCase[] = [
  // reference
  ['subject=Patient/pat-eve', ['obs-1']],
  ['subject=pat-eve', ['obs-1', 'obs-5']],
  ['subject=Patient/pat-eve/_history/3', ['obs-1']],
  ['subject=Group/pat-eve', ['obs-5']],
  ['subject=Patient/pat-eve,Patient/pat-jose', ['obs-1', 'obs-2']],
  ['subject=http://example.org/fhir/Patient/ext1', ['obs-3']],
  ['subject=http://elsewhere.org/fhir/Patient/pat-eve', ['obs-1']],
  ['subject=http://example.org/fhir/Patient/nothere', []],
  ['subject=Patient/ext1', ['obs-3']],
  ['focus=urn:uuid:5a3e0f4c-0000-4000-8000-000000000001', ['obs-4']],
  ['based-on=http://example.org/fhir/ServiceRequest/sr1', ['obs-3']],
  ['based-on=http://example.org/fhir/ServiceRequest/sr1|2', ['obs-3']],
  ['based-on=http://example.org/fhir/ServiceRequest/s', []],
  ['subject:missing=true', ['obs-4']],
  // token
  [`code=${LOINC}|29463-7`, ['obs-2', 'obs-5']],
  ['code=|abc', ['obs-3']],
  ['code=abc', ['obs-3']],
  [`code=${LOINC}|`, ['obs-1', 'obs-2', 'obs-5']],
  ['code:text=body', ['obs-2', 'obs-5']],
  ['code:text=FREE', ['obs-4']],
  [`code:not=${LOINC}|29463-7`, ['obs-1', 'obs-3', 'obs-4']],
  [`subject=Patient/pat-eve,Patient/pat-jose&code=${LOINC}|29463-7`, ['obs-2']],
  // quantity: obs-1 72 /min, obs-2 80.5 kg, obs-3 100 mg (no system), obs-5 80 kg
  ['value-quantity=72', ['obs-1']],
  ['value-quantity=gt75', ['obs-2', 'obs-3', 'obs-5']],
  [`value-quantity=gt75|${UCUM}|kg`, ['obs-2', 'obs-5']],
  ['value-quantity=80||kg', ['obs-5']],
  [`value-quantity=80.5|${UCUM}|kg`, ['obs-2']],
  [`value-quantity=100|${UCUM}|mg`, []],
  ['value-quantity=100||mg', ['obs-3']],
  ['value-quantity=ap80||kg', ['obs-2', 'obs-5']],
  ['value-quantity=le80', ['obs-1', 'obs-5']],
  ['value-quantity=ge80.5', ['obs-2', 'obs-3']],
  ['value-quantity=lt80', ['obs-1']],
  ['value-quantity=sa80', ['obs-2', 'obs-3']],
  ['value-quantity=eb80', ['obs-1']],
  ['value-quantity=ne80', ['obs-1', 'obs-2', 'obs-3']],
  ['value-quantity:missing=true', ['obs-4']],
  // dates with open ends: obs-2 [2023-06-01, ∞), obs-3 (-∞, 2020-01-01)
  ['date=2023-06-01', ['obs-1']],
  ['date=gt2023-06-01', ['obs-2', 'obs-5']],
  ['date=lt2023-06-01', ['obs-3']],
  ['date=ne2023-06-01', ['obs-2', 'obs-3', 'obs-5']],
  ['date=sa2020-01-01', ['obs-1', 'obs-2', 'obs-5']],
  ['date=eb2020-01-01', ['obs-3']],
  ['date=le2019', ['obs-3']],
  ['date=ge2023-06-15', ['obs-2', 'obs-5']],
  ['date=ap2023-06-01T10:00:00Z', ['obs-1', 'obs-2', 'obs-5']],
  ['date=ge2023-06-01&date=lt2023-07', ['obs-1', 'obs-2', 'obs-5']],
  ['date:missing=true', ['obs-4']],
  // ap near now widens by at least a day: obs-4 is 20 hours ahead, obs-5 30 hours
  [`value-date=ap${NOW_SECOND}`, ['obs-4']],
  [`value-date=gt${NOW_SECOND}`, ['obs-4', 'obs-5']],
  // uri
  [`_profile=${SD}/vitalsigns`, ['obs-1']],
  [`_profile=${SD}/vital`, []],
  [`_profile:below=${SD}`, ['obs-1', 'obs-2']],
  ['_profile:below=http://hl7.org/fhir', ['obs-1', 'obs-2', 'obs-3']],
  [`_profile:above=${SD}/bodyweight/extra`, ['obs-2', 'obs-3']],
  ['_profile:above=http://hl7.org', []],
  ['_profile:below=http://example.org/profiles/50%', ['obs-5']],
  ['_profile:below=http://example.org/profiles/5_', []],
  ['_profile:missing=true', ['obs-4']],
];

const RISK_CASES: MatchCase[] = [
  // number: 100, 99.6, 101, 0, 111, 85; ra-none has none
  ['probability=100', ['ra-100', 'ra-99.6']],
  ['probability=100.0', ['ra-100']],
  ['probability=1e2', ['ra-100', 'ra-101', 'ra-111', 'ra-85', 'ra-99.6']],
  ['probability=ne100', ['ra-0', 'ra-101', 'ra-111', 'ra-85']],
  ['probability=gt100', ['ra-101', 'ra-111']],
  ['probability=ge100', ['ra-100', 'ra-101', 'ra-111']],
  ['probability=lt100', ['ra-0', 'ra-85', 'ra-99.6']],
  ['probability=le100', ['ra-0', 'ra-100', 'ra-85', 'ra-99.6']],
  ['probability=sa100', ['ra-101', 'ra-111']],
  ['probability=eb100', ['ra-0', 'ra-85', 'ra-99.6']],
  ['probability=ap100', ['ra-100', 'ra-101', 'ra-99.6']],
  ['probability=ap0', ['ra-0']],
  ['probability=gt100&probability=lt105', ['ra-101']],
  ['probability=lt50,gt105', ['ra-0', 'ra-111']],
  ['probability=-1e-7', []],
  ['probability:missing=true', ['ra-none']],
];

type SortCase = [type: string, sort: string, want: string[]];

const ALL_PATIENTS = ['pat-eve', 'pat-jose', 'pat-meta', 'pat-nobirth', 'pat-plain'];

const SORT_CASES: SortCase[] = [
  ['Patient', '', ['pat-nobirth', 'pat-plain', 'pat-meta', 'pat-jose', 'pat-eve']],
  ['Patient', '_id', ALL_PATIENTS],
  ['Patient', '-_id', [...ALL_PATIENTS].reverse()],
  ['Patient', '_lastUpdated', ['pat-eve', 'pat-jose', 'pat-meta', 'pat-plain', 'pat-nobirth']],
  ['Patient', '-_lastUpdated', ['pat-nobirth', 'pat-plain', 'pat-meta', 'pat-jose', 'pat-eve']],
  ['Patient', 'birthdate', ['pat-jose', 'pat-plain', 'pat-eve', 'pat-meta', 'pat-nobirth']],
  ['Patient', '-birthdate', ['pat-meta', 'pat-eve', 'pat-plain', 'pat-jose', 'pat-nobirth']],
  // smallest name ascending ("'; drop…" < "500 off" < eve < jose < nobody), largest descending
  ['Patient', 'name', ['pat-meta', 'pat-plain', 'pat-eve', 'pat-jose', 'pat-nobirth']],
  // pat-nobirth's largest name starts with zz: first
  ['Patient', '-name', ['pat-nobirth', 'pat-meta', 'pat-jose', 'pat-eve', 'pat-plain']],
  // ties broken by the next key, then by id
  ['Patient', 'gender', ['pat-eve', 'pat-plain', 'pat-jose', 'pat-meta', 'pat-nobirth']],
  ['Patient', '-gender', ['pat-meta', 'pat-jose', 'pat-eve', 'pat-plain', 'pat-nobirth']],
  ['Patient', 'gender,-birthdate', ['pat-eve', 'pat-plain', 'pat-jose', 'pat-meta', 'pat-nobirth']],
  ['Patient', 'gender,birthdate', ['pat-plain', 'pat-eve', 'pat-jose', 'pat-meta', 'pat-nobirth']],
  ['Observation', 'value-quantity', ['obs-1', 'obs-5', 'obs-2', 'obs-3', 'obs-4']],
  ['Observation', '-value-quantity', ['obs-3', 'obs-2', 'obs-5', 'obs-1', 'obs-4']],
  ['Observation', 'subject', ['obs-3', 'obs-1', 'obs-5', 'obs-2', 'obs-4']],
  ['Observation', '_profile', ['obs-5', 'obs-3', 'obs-2', 'obs-1', 'obs-4']],
  // a Period without start sorts first; no date at all sorts last
  ['Observation', 'date', ['obs-3', 'obs-2', 'obs-1', 'obs-5', 'obs-4']],
  ['Observation', '-date', ['obs-5', 'obs-1', 'obs-2', 'obs-3', 'obs-4']],
  [
    'RiskAssessment',
    'probability',
    ['ra-0', 'ra-85', 'ra-99.6', 'ra-100', 'ra-101', 'ra-111', 'ra-none'],
  ],
];

type PageCase = [count: number, offset: number, want: string[]];

const PAGE_CASES: PageCase[] = [
  [2, 0, ['pat-eve', 'pat-jose']],
  [2, 1, ['pat-jose', 'pat-meta']],
  [2, 4, ['pat-plain']],
  [2, 10, []],
  [0, 0, []],
];

type IncludeCase = [
  name: string,
  run: () => SqlQuery,
  want: string[],
  /** The project the returned content must come from. */
  project?: string,
];

const INCLUDE_CASES: IncludeCase[] = [
  [
    'subject of observations, any type',
    () => buildIncludeQuery('p1', 'Observation', ['obs-1', 'obs-2', 'obs-3', 'obs-5'], 'subject'),
    ['Group/pat-eve', 'Patient/pat-eve', 'Patient/pat-jose'],
    'p1',
  ],
  [
    'subject of observations, Patient only',
    () => buildIncludeQuery('p1', 'Observation', ['obs-1', 'obs-2', 'obs-5'], 'subject', 'Patient'),
    ['Patient/pat-eve', 'Patient/pat-jose'],
  ],
  [
    'each target once',
    () => buildIncludeQuery('p1', 'Observation', ['obs-1', 'obs-1'], 'subject'),
    ['Patient/pat-eve'],
  ],
  [
    'deleted targets are left out',
    () => buildIncludeQuery('p1', 'Observation', ['obs-1'], 'performer'),
    [],
  ],
  [
    'targets in the same project only',
    () => buildIncludeQuery('p1', 'Patient', ['pat-eve', 'pat-jose'], 'general-practitioner'),
    ['Practitioner/dr1'],
    'p1',
  ],
  [
    'from another project',
    () => buildIncludeQuery('p2', 'Observation', ['obs-p2', 'obs-1'], 'subject'),
    ['Patient/pat-eve'],
    'p2',
  ],
  ['no source ids', () => buildIncludeQuery('p1', 'Observation', [], 'subject'), []],
  [
    'metacharacters',
    () => buildIncludeQuery('p1', INJECTION, [INJECTION, '%'], INJECTION, INJECTION),
    [],
  ],
  [
    'revinclude Patient',
    () =>
      buildRevIncludeQuery('p1', 'Observation', 'subject', [{ type: 'Patient', id: 'pat-eve' }]),
    ['Observation/obs-1'],
    'p1',
  ],
  [
    'revinclude several targets',
    () =>
      buildRevIncludeQuery('p1', 'Observation', 'subject', [
        { type: 'Patient', id: 'pat-eve' },
        { type: 'Group', id: 'pat-eve' },
        { type: 'Patient', id: 'pat-jose' },
      ]),
    ['Observation/obs-1', 'Observation/obs-2', 'Observation/obs-5'],
  ],
  [
    'revinclude by another parameter',
    () =>
      buildRevIncludeQuery('p1', 'Patient', 'general-practitioner', [
        { type: 'Practitioner', id: 'dr1' },
      ]),
    ['Patient/pat-eve'],
  ],
  [
    'revinclude in another project',
    () =>
      buildRevIncludeQuery('p2', 'Observation', 'subject', [{ type: 'Patient', id: 'pat-eve' }]),
    ['Observation/obs-p2'],
    'p2',
  ],
  ['revinclude nothing', () => buildRevIncludeQuery('p1', 'Observation', 'subject', []), []],
  [
    'revinclude metacharacters',
    () => buildRevIncludeQuery('p1', 'Observation', INJECTION, [{ type: INJECTION, id: '%' }]),
    [],
  ],
];

const databases: [name: string, open: () => Promise<TestDatabase>][] = [['PGlite', openPglite]];
const postgresUrl = process.env.GRAPHIR_TEST_DATABASE_URL;
if (postgresUrl) databases.push(['PostgreSQL', () => openPostgres(postgresUrl)]);

describe('successor: the least text after every text that starts with the given one', () => {
  it.each([
    ['abc', 'abd'],
    ['a', 'b'],
    ['zoé', 'zoê'],
    ['a\uD7FF', 'a\uE000'],
    ['a😀', 'a😁'],
    ['a\u{10FFFF}', 'b'],
    ['a\u{10FFFF}\u{10FFFF}', 'b'],
    ['\u{10FFFF}', undefined],
    ['', undefined],
  ])('%j → %j', (text, want) => {
    expect(successor(text)).toBe(want);
  });
});

describe.each(databases)('search SQL on %s', (_name, open) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await open();
    for (const migration of BEFORE_SEED) await db.exec(migration);
    for (const seed of [...PATIENTS, ...OBSERVATIONS, ...RISK_ASSESSMENTS, ...OTHERS]) {
      await insert(db, seed);
    }
    for (const migration of AFTER_SEED) await db.exec(migration);
  });

  afterAll(async () => {
    await db?.close();
  });

  /** The ids found (in any order), checked against the count query for the same criteria. */
  async function matches(type: string, query: string): Promise<string[]> {
    const found = ids(await db.query(search(type, query)));
    const definition = loadSearchDefinition(type);
    const [{ total }] = await db.query(buildCountQuery('p1', definition, criteria(type, query)));
    expect(total).toBe(found.length);
    return sorted(found);
  }

  describe.each([
    ['Patient', PATIENT_CASES],
    ['Observation', OBSERVATION_CASES],
    ['RiskAssessment', RISK_CASES],
  ] as const)('%s', (type, cases) => {
    it.each(cases)('%s', async (query, want) => {
      expect(await matches(type, query)).toEqual(sorted(want));
    });
  });

  it.each(SORT_CASES)('%s sorted by "%s"', async (type, sort, want) => {
    const rows = await db.query(search(type, '', sort ? sortKeys(sort) : []));
    expect(ids(rows)).toEqual(want);
  });

  it.each(PAGE_CASES)('pages of %i from %i', async (count, offset, want) => {
    const rows = await db.query(search('Patient', '', sortKeys('_id'), count, offset));
    expect(ids(rows)).toEqual(want);
  });

  // Criteria that are all index matches, in last-update order: the page is cut from the index
  // rows (which carry the last update) before any resource is read.
  it.each<[query: string, sort: string, count: number, offset: number, want: string[]]>([
    // pat-eve has two names that match: one row per resource, and full pages
    ['name=e,j,n', '', 2, 0, ['pat-nobirth', 'pat-jose']],
    ['name=e,j,n', '', 2, 2, ['pat-eve']],
    ['name=e,j,n', '', 1, 2, ['pat-eve']],
    ['name=e,j,n', '', 5, 3, []],
    ['name=e,j,n', '_lastUpdated', 2, 0, ['pat-eve', 'pat-jose']],
    ['name=e,j,n', '-_lastUpdated', 2, 1, ['pat-jose', 'pat-eve']],
    ['gender=female,male,other&birthdate=lt2001', '', 2, 0, ['pat-plain', 'pat-meta']],
    ['gender=female,male,other&birthdate=lt2001', '', 2, 2, ['pat-jose', 'pat-eve']],
    ['gender=female&name=eve', '', 10, 0, ['pat-eve']],
  ])('pages "%s" sorted by "%s", %i from %i', async (query, sort, count, offset, want) => {
    const text = search('Patient', query, sort ? sortKeys(sort) : [], count, offset).text;
    expect(text).not.toMatch(/FROM resource r\b/);
    const rows = await db.query(
      search('Patient', query, sort ? sortKeys(sort) : [], count, offset),
    );
    expect(ids(rows)).toEqual(want);
  });

  it('counts from the index rows when every criterion is an index match', async () => {
    const definition = loadSearchDefinition('Patient');
    const count = (query: string) => buildCountQuery('p1', definition, criteria('Patient', query));
    expect(count('name=e,j,n').text).not.toMatch(/FROM resource r\b/);
    expect(await db.query(count('name=e,j,n'))).toEqual([{ total: 3 }]);
    expect(await db.query(count('gender=female,male,other&birthdate=lt2001'))).toEqual([
      { total: 4 },
    ]);
    expect(count('name=e&_id=pat-eve').text).toMatch(/FROM resource r\b/);
  });

  it('counts one token value from the kept counts, and nothing else', () => {
    const definition = loadSearchDefinition('Patient');
    const kept = (query: string) =>
      /FROM search_token_count\b/.test(
        buildCountQuery('p1', definition, criteria('Patient', query)).text,
      );
    for (const query of ['gender=female', `gender=${GENDER}|female`, 'identifier=|789'])
      expect(kept(query), query).toBe(true);
    for (const query of [
      'gender=female,male',
      'gender=female&active=true',
      'gender:not=female',
      'gender:missing=true',
      `gender=${GENDER}|`,
      'identifier:text=medical',
      '_id=pat-eve',
      'name=eve',
    ])
      expect(kept(query), query).toBe(false);
  });

  it('reads every match to sort by anything else, or to check a condition on the resource', () => {
    for (const [query, sort] of [
      ['name=e', 'birthdate'],
      ['name=e', '_id'],
      ['name=e&_id=pat-eve', ''],
      ['name=e&family:missing=true', ''],
      ['', ''],
    ]) {
      expect(search('Patient', query, sort ? sortKeys(sort) : []).text).toMatch(
        /FROM resource r\b/,
      );
    }
  });

  it('sorts, pages and counts the same match', async () => {
    const query = 'gender=female,male,other';
    const page = await db.query(search('Patient', query, sortKeys('-birthdate'), 2, 1));
    expect(ids(page)).toEqual(['pat-eve', 'pat-plain']);
    const definition = loadSearchDefinition('Patient');
    const count = buildCountQuery('p1', definition, criteria('Patient', query));
    expect(await db.query(count)).toEqual([{ total: 4 }]);
  });

  it('returns resource_type, id and version_id (the contents come by version)', async () => {
    const rows = await db.query(search('Patient', '_id=pat-eve'));
    expect(rows.map((row) => ({ ...row, version_id: String(row.version_id) }))).toEqual([
      { resource_type: 'Patient', id: 'pat-eve', version_id: '1' },
    ]);
  });

  it('keeps projects apart', async () => {
    const definition = loadSearchDefinition('Patient');
    const query = (project: string) =>
      buildSearchQuery(project, definition, criteria('Patient', 'name=eve'), {
        count: 10,
        offset: 0,
        sort: [],
      });
    expect(sorted(ids(await db.query(query('p2'))))).toEqual(['pat-eve', 'pat-p2']);
    for (const row of await db.query(query('p2'))) expect(String(row.version_id)).toBe('2');
    expect(await db.query(query(`p1' OR '1'='1`))).toEqual([]);
    expect(await db.query(query('p3'))).toEqual([]);
  });

  it.each(INCLUDE_CASES)('include: %s', async (_case, run, want, project) => {
    const rows = await db.query(run());
    expect(keys(rows)).toEqual(want);
    if (project) for (const row of rows) expect(String(row.version_id)).toBe(VERSION_IN[project]);
  });

  it('restricts references to the type a modifier names (subject:Patient=pat-eve)', async () => {
    const definition = loadSearchDefinition('Observation');
    const find = async (modifier: string, reference: string) => {
      const parsed = parseCriterion(definition, 'subject', undefined, reference, 'subject');
      const criterion = { ...parsed, modifier } as SearchCriterion;
      const query = buildSearchQuery('p1', definition, [criterion], {
        count: 10,
        offset: 0,
        sort: [],
      });
      return sorted(ids(await db.query(query)));
    };
    expect(await find('Patient', 'pat-eve')).toEqual(['obs-1']);
    expect(await find('Group', 'pat-eve')).toEqual(['obs-5']);
    expect(await find('Patient', 'Group/pat-eve')).toEqual([]);
  });

  it('still has every table after the injection attempts', async () => {
    const rows = await db.query({
      text: 'SELECT count(*)::integer AS n FROM resource',
      values: [],
    });
    expect(rows[0].n).toBe(
      PATIENTS.length + OBSERVATIONS.length + RISK_ASSESSMENTS.length + OTHERS.length,
    );
  });
});

describe('unsupported searches', () => {
  const options = { count: 10, offset: 0, sort: [] };

  it.each([
    ['composite', 'Observation', 'code-value-quantity', undefined, `${LOINC}|8867-4$gt70`],
    ['special', 'Location', 'near', undefined, '42.25|-83.69|10|km'],
    ['composite :missing', 'Group', 'characteristic-value', 'missing', 'true'],
  ])('%s parameters throw', (_name, type, code, modifier, value) => {
    const definition = loadSearchDefinition(type);
    const criterion: SearchCriterion =
      modifier === 'missing'
        ? { code, modifier, missing: value === 'true' }
        : parseCriterion(definition, code, modifier, value, code);
    expect(() => buildSearchQuery('p1', definition, [criterion], options)).toThrow(
      UnsupportedSearchError,
    );
    expect(() => buildCountQuery('p1', definition, [criterion])).toThrow(UnsupportedSearchError);
  });

  it.each<[string, SearchCriterion]>([
    ['an unknown parameter', { code: 'shoe-size', values: [{ type: 'string', value: 'x' }] }],
    [
      'an unknown modifier',
      { code: 'code', modifier: 'in', values: [{ type: 'uri', value: 'x' }] },
    ],
    ['_id:text', { code: '_id', modifier: 'text', values: [{ type: 'string', value: 'x' }] }],
    ['a value of the wrong type', { code: 'code', values: [{ type: 'string', value: 'x' }] }],
  ])('%s throws', (_name, criterion) => {
    const definition = loadSearchDefinition('Observation');
    expect(() => buildSearchQuery('p1', definition, [criterion], options)).toThrow(
      UnsupportedSearchError,
    );
  });

  it('sorting by composite, special or unknown parameters throws', () => {
    const definition = loadSearchDefinition('Observation');
    for (const code of ['code-value-quantity', 'shoe-size']) {
      const sort = [{ code, descending: false }];
      expect(() => buildSearchQuery('p1', definition, [], { ...options, sort })).toThrow(
        UnsupportedSearchError,
      );
    }
  });

  it('rejects negative or fractional paging', () => {
    const definition = loadSearchDefinition('Observation');
    expect(() => buildSearchQuery('p1', definition, [], { ...options, count: -1 })).toThrow(
      RangeError,
    );
    expect(() => buildSearchQuery('p1', definition, [], { ...options, offset: 1.5 })).toThrow(
      RangeError,
    );
  });

  it('never puts a value into the SQL text', () => {
    const definition = loadSearchDefinition('Patient');
    const query = buildSearchQuery(
      `project${INJECTION}`,
      definition,
      criteria('Patient', `name=${INJECTION}&identifier=${INJECTION}|x&birthdate=ge2020`),
      { count: 7, offset: 3, sort: sortKeys('-name') },
    );
    expect(query.text).not.toContain('DROP');
    expect(query.text).not.toContain('drop');
    expect(query.text).not.toContain('2020');
    expect(query.values).toContain(`project${INJECTION}`);
  });
});
