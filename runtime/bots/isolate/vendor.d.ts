/** The npm packages the isolate's web platform bundles that ship no types of their own. */
declare module '@ungap/structured-clone' {
  export function serialize(
    value: unknown,
    options?: { json?: boolean; lossy?: boolean },
  ): unknown[];
  export function deserialize(records: unknown[]): unknown;
}
