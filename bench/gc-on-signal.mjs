// Preloaded (`node --expose-gc --import`) into the servers of `npm run bench:load -- --gc`:
// SIGUSR2 runs a full garbage collection, so that a memory reading shows what is still live.
process.on('SIGUSR2', () => globalThis.gc?.());
