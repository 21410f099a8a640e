export * from './graphir-client.js';
export { GraphirError } from './graphir-error.js';
export type { RequestOptions } from './fhir-transport.js';
export type { ResourceArray, ResourceOf, WithId } from './resource-types.js';
export type { SearchQuery } from './search-query.js';
export type { GraphqlError, GraphqlResponse, GraphqlVariables } from './graphql-call.js';
export { HL7_CONTENT_TYPE, type BotIdentifier, type ExecuteBotOptions } from './bot-execution.js';
export { Hl7Context, Hl7Field, Hl7Message, Hl7Segment, type Hl7AckOptions } from '../hl7/index.js';
