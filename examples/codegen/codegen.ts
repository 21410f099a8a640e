/**
 * GraphQL Code Generator against a running Graphir: the schema is what the server's `$graphql`
 * endpoint answers to introspection, asked with a bearer token, and `typescript-operations`
 * types each operation of `operations/` — its result and its variables — in
 * `generated/graphql.ts`.
 *
 *   export GRAPHIR_URL=http://localhost:8080 GRAPHIR_TOKEN=…   # an access token of the server
 *   npx graphql-codegen                                        # in this folder
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const root = process.env.GRAPHIR_URL ?? 'http://localhost:8080';
const token = process.env.GRAPHIR_TOKEN;
if (!token) throw new Error('Set GRAPHIR_TOKEN to an access token of the server');

const config: CodegenConfig = {
  // Introspection rather than the SDL at `$graphql/schema.graphql`: a refused token then
  // reads as the server's message, where the SDL loader would try to parse the refusal.
  schema: {
    [`${root}/fhir/R4/$graphql`]: {
      headers: { Authorization: `Bearer ${token}` },
    },
  },
  documents: 'operations/*.graphql',
  generates: {
    'generated/graphql.ts': {
      // Since typescript-operations 6, it writes the input types and enums the operations use
      // itself; the `typescript` plugin would add every type of the FHIR schema beside them.
      plugins: ['typescript-operations'],
      config: {
        // Fail on a custom scalar that has no type here: `JSON`, a resource as FHIR JSON writes
        // it (`contained`, Bundle entries), is the only one.
        strictScalars: true,
        scalars: { JSON: 'unknown' },
      },
    },
  },
};

export default config;
