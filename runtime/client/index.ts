export * from './graphir-client.js';
export { Hl7Message, type Hl7Segment, type Hl7Delimiters } from '../hl7/hl7-message.js';
