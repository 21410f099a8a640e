/**
 * HL7 v2 messages, with Medplum's classes and numbering: a bottom layer that imports nothing of
 * Graphir's, shared by the server (reading `$execute` bodies), the bots' isolates (bundled by
 * bots/isolate/hl7.ts) and the client library.
 */
export { Hl7Context } from './context.js';
export { Hl7Field } from './field.js';
export { AckCode, Hl7Message, type Hl7AckOptions } from './message.js';
export { HL7_V2_ER7 } from './media-type.js';
export { Hl7Segment } from './segment.js';
