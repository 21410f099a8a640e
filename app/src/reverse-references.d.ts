/** Made by app/build.ts from the generated search maps: target type → source type → parameters. */
declare module 'graphir:reverse-references' {
  const byTarget: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
  export default byTarget;
}
