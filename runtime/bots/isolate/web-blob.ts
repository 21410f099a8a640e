/**
 * Blob, File and FormData as the File API and XHR standards define them, held in memory (the
 * isolate has no files or streams): a Blob is its bytes, and a FormData its entries.
 */
import { encodeUtf8, decodeUtf8 } from './web-utf8.js';

export type BlobPart = string | ArrayBuffer | ArrayBufferView | Blob;

export interface BlobPropertyBag {
  type?: string;
}

/** Bytes of an ArrayBuffer or a view, copied so that later writes to them change nothing. */
export function bytesOf(source: ArrayBuffer | ArrayBufferView): Uint8Array {
  if (ArrayBuffer.isView(source)) {
    return new Uint8Array(source.buffer, source.byteOffset, source.byteLength).slice();
  }
  return new Uint8Array(source).slice();
}

export function isBufferSource(value: unknown): value is ArrayBuffer | ArrayBufferView {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    joined.set(chunk, at);
    at += chunk.length;
  }
  return joined;
}

/** The contents of each Blob, kept out of the bot's reach. */
const contents = new WeakMap<Blob, Uint8Array>();

/** A Blob's own bytes (not a copy): for this group's Body and FormData only. */
export function blobBytes(blob: Blob): Uint8Array {
  return contents.get(blob)!;
}

/** A type is kept lowercased only when all its characters are printable ASCII. */
function normalizedType(type: unknown): string {
  const text = type === undefined ? '' : String(type);
  return /^[\x20-\x7e]*$/.test(text) ? text.toLowerCase() : '';
}

export class Blob {
  readonly #type: string;

  constructor(parts: Iterable<BlobPart> = [], options: BlobPropertyBag = {}) {
    if (typeof parts !== 'object' || parts === null || !(Symbol.iterator in parts)) {
      throw new TypeError('The Blob parts must be a sequence');
    }
    const chunks: Uint8Array[] = [];
    for (const part of parts) {
      if (part instanceof Blob) chunks.push(blobBytes(part));
      else if (isBufferSource(part)) chunks.push(bytesOf(part));
      else chunks.push(encodeUtf8(String(part)));
    }
    contents.set(this, concatBytes(chunks));
    this.#type = normalizedType(options?.type);
  }

  get size(): number {
    return blobBytes(this).length;
  }

  get type(): string {
    return this.#type;
  }

  slice(start?: number, end?: number, type?: string): Blob {
    const sliced = new Blob([], { type });
    contents.set(sliced, blobBytes(this).slice(start, end));
    return sliced;
  }

  async text(): Promise<string> {
    return decodeUtf8(blobBytes(this));
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return blobBytes(this).slice().buffer;
  }

  async bytes(): Promise<Uint8Array> {
    return blobBytes(this).slice();
  }

  get [Symbol.toStringTag](): string {
    return 'Blob';
  }
}

export interface FilePropertyBag extends BlobPropertyBag {
  lastModified?: number;
}

export class File extends Blob {
  readonly name: string;
  readonly lastModified: number;

  constructor(parts: Iterable<BlobPart>, name: string, options: FilePropertyBag = {}) {
    if (arguments.length < 2) throw new TypeError('File needs its parts and its name');
    super(parts, options);
    this.name = String(name);
    this.lastModified = options.lastModified === undefined ? Date.now() : +options.lastModified;
  }

  override get [Symbol.toStringTag](): string {
    return 'File';
  }
}

export type FormDataEntryValue = string | File;

/** A Blob value becomes a File named `filename`, or "blob". */
function entryValue(value: unknown, filename: unknown): FormDataEntryValue {
  if (!(value instanceof Blob)) return String(value);
  if (value instanceof File && filename === undefined) return value;
  const name = filename === undefined ? 'blob' : String(filename);
  const file = new File([], name, {
    type: value.type,
    lastModified: value instanceof File ? value.lastModified : undefined,
  });
  contents.set(file, blobBytes(value));
  return file;
}

export class FormData {
  readonly #entries: [string, FormDataEntryValue][] = [];

  constructor(form?: undefined) {
    if (form !== undefined) throw new TypeError('FormData takes no form in the bot sandbox');
  }

  append(name: string, value: string | Blob, filename?: string): void {
    this.#entries.push([String(name), entryValue(value, filename)]);
  }

  set(name: string, value: string | Blob, filename?: string): void {
    const key = String(name);
    const entry: [string, FormDataEntryValue] = [key, entryValue(value, filename)];
    const first = this.#entries.findIndex(([each]) => each === key);
    if (first < 0) {
      this.#entries.push(entry);
      return;
    }
    this.#entries[first] = entry;
    for (let index = this.#entries.length - 1; index > first; index--) {
      if (this.#entries[index][0] === key) this.#entries.splice(index, 1);
    }
  }

  delete(name: string): void {
    const key = String(name);
    for (let index = this.#entries.length - 1; index >= 0; index--) {
      if (this.#entries[index][0] === key) this.#entries.splice(index, 1);
    }
  }

  get(name: string): FormDataEntryValue | null {
    const key = String(name);
    return this.#entries.find(([each]) => each === key)?.[1] ?? null;
  }

  getAll(name: string): FormDataEntryValue[] {
    const key = String(name);
    return this.#entries.filter(([each]) => each === key).map(([, value]) => value);
  }

  has(name: string): boolean {
    const key = String(name);
    return this.#entries.some(([each]) => each === key);
  }

  forEach(
    callback: (value: FormDataEntryValue, key: string, parent: FormData) => void,
    thisArg?: unknown,
  ): void {
    for (const [key, value] of this) callback.call(thisArg, value, key, this);
  }

  *entries(): IterableIterator<[string, FormDataEntryValue]> {
    for (let index = 0; index < this.#entries.length; index++) {
      const [key, value] = this.#entries[index];
      yield [key, value];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<FormDataEntryValue> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, FormDataEntryValue]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'FormData';
  }
}

/** Content-Disposition quoting of names in multipart/form-data, as browsers do it. */
function quoted(text: string): string {
  return text.replace(/\r\n|\r|\n/g, '\r\n').replace(/[\n\r"]/g, (c) => encodeURIComponent(c));
}

/** `form` as a multipart/form-data body, with its boundary. */
export function multipartOf(form: FormData): { bytes: Uint8Array; boundary: string } {
  const boundary = `----graphir-${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
  const chunks: Uint8Array[] = [];
  for (const [name, value] of form) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"`;
    if (typeof value === 'string') {
      chunks.push(encodeUtf8(`${head}\r\n\r\n${value.replace(/\r\n|\r|\n/g, '\r\n')}\r\n`));
      continue;
    }
    head += `; filename="${quoted(value.name)}"\r\nContent-Type: ${value.type || 'application/octet-stream'}\r\n\r\n`;
    chunks.push(encodeUtf8(head), blobBytes(value), encodeUtf8('\r\n'));
  }
  chunks.push(encodeUtf8(`--${boundary}--\r\n`));
  return { bytes: concatBytes(chunks), boundary };
}

/** A multipart/form-data body read back into a FormData. */
export function formDataOfMultipart(bytes: Uint8Array, boundary: string): FormData {
  // Latin-1 keeps one character per byte, so that offsets in the text are offsets in the bytes.
  let text = '';
  for (let at = 0; at < bytes.length; at += 8192) {
    text += String.fromCharCode(...bytes.subarray(at, at + 8192));
  }
  const form = new FormData();
  const delimiter = `--${boundary}`;
  const parts = text.split(delimiter);
  if (parts.length < 2) throw new TypeError('The multipart body has no part with its boundary');
  let offset = parts[0].length + delimiter.length;
  for (const part of parts.slice(1)) {
    if (part.startsWith('--')) break;
    const partOffset = offset;
    offset += part.length + delimiter.length;
    const headEnd = part.indexOf('\r\n\r\n');
    if (headEnd < 0) throw new TypeError('A multipart part has no header end');
    const head = part.slice(2, headEnd);
    const start = headEnd + 4;
    const end = part.endsWith('\r\n') ? part.length - 2 : part.length;
    const body = bytes.slice(partOffset + start, partOffset + end);
    const disposition = /content-disposition:[^\r\n]*/i.exec(head)?.[0] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw new TypeError('A multipart part has no name');
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    const type = /content-type:\s*([^\r\n]*)/i.exec(head)?.[1] ?? '';
    const utf8Name = decodeUtf8(Uint8Array.from(name, (c) => c.charCodeAt(0)));
    if (filename === undefined) {
      form.append(utf8Name, decodeUtf8(body));
    } else {
      const file = new File([], decodeUtf8(Uint8Array.from(filename, (c) => c.charCodeAt(0))), {
        type,
      });
      contents.set(file, body);
      form.append(utf8Name, file);
    }
  }
  return form;
}
