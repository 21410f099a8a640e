/**
 * The HL7 v2 classes inside a bot's isolate (runtime/hl7/, Medplum's API): the globals
 * `Hl7Message`, `Hl7Segment`, `Hl7Field` and `Hl7Context` (bots/bot-preludes.ts).
 */
export { Hl7Context, Hl7Field, Hl7Message, Hl7Segment } from '../../hl7/index.js';
