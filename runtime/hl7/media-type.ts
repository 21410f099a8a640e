/** The media type of HL7 v2 messages in ER7 ("pipe and hat") encoding, as Medplum names it. */
export const HL7_V2_ER7 = 'x-application/hl7-v2+er7';
