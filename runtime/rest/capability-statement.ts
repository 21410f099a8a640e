/**
 * `GET [base]/metadata`: what this server supports, built from the generated search maps on
 * first request and kept as JSON text: it is large, and serialising it anew for every request
 * would cost more than answering most requests.
 * @see http://hl7.org/fhir/R4/capabilitystatement.html
 */
import { loadSearchDefinition, searchableTypes } from '../../generated/search/index.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { isSupportedParameter } from './search-request.js';

const INTERACTIONS = [
  'read',
  'vread',
  'update',
  'patch',
  'delete',
  'history-instance',
  'create',
  'search-type',
];
let cached: { base: string; json: string } | undefined;

/** The CapabilityStatement as JSON text, for a server whose base URL is `base`. */
export function capabilityStatementJson(base: string): string {
  if (cached?.base !== base) cached = { base, json: JSON.stringify(build(base)) };
  return cached.json;
}

function build(base: string): FhirResource {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: '2026-11-21',
    kind: 'instance',
    software: { name: 'Graphir', version: '0.1.0' },
    implementation: { description: 'Graphir FHIR R4 server', url: base },
    fhirVersion: '4.0.1',
    format: ['application/fhir+json', 'json'],
    rest: [
      {
        mode: 'server',
        interaction: [{ code: 'transaction' }, { code: 'batch' }],
        resource: [...searchableTypes].map((type) => {
          const definition = loadSearchDefinition(type);
          return {
            type,
            interaction: INTERACTIONS.map((code) => ({ code })),
            versioning: 'versioned',
            readHistory: true,
            updateCreate: true,
            conditionalCreate: true,
            // If-None-Match and If-Modified-Since (rest/conditional-read.ts).
            conditionalRead: 'full-support',
            conditionalUpdate: true,
            // One match at a time: several are refused (412), not all deleted.
            conditionalDelete: 'single',
            searchInclude: Object.values(definition.parameters)
              .filter((p) => p.type === 'reference')
              .map((p) => `${type}:${p.code}`),
            searchParam: Object.values(definition.parameters)
              .filter((p) => isSupportedParameter(p) && p.expression !== '')
              .map((p) => ({ name: p.code, type: p.type })),
            operation: [
              {
                name: 'graphql',
                definition: 'http://hl7.org/fhir/OperationDefinition/Resource-graphql',
              },
              ...(type === 'Bot'
                ? [{ name: 'execute', definition: `${base}/OperationDefinition/Bot-execute` }]
                : []),
            ],
          };
        }),
        operation: [
          {
            name: 'graphql',
            definition: 'http://hl7.org/fhir/OperationDefinition/Resource-graphql',
          },
        ],
      },
    ],
  };
}
