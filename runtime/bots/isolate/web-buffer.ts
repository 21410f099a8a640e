/**
 * Node's Buffer, by the `buffer` package (the browser implementation bundlers use):
 * Buffer.from(text, 'base64'), toString('hex'), readUInt32BE and the rest.
 */
export { Buffer } from 'buffer';
