/**
 * @medplum/core reads `WebSocket.CLOSING` and `WebSocket.CLOSED` when it loads, and Node 20 has
 * no `WebSocket` global. Imported before @medplum/core; these tests open no WebSocket.
 */
if (typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'undefined') {
  (globalThis as { WebSocket?: unknown }).WebSocket = class {
    static readonly CONNECTING = 0;
    static readonly OPEN = 1;
    static readonly CLOSING = 2;
    static readonly CLOSED = 3;
    constructor() {
      throw new Error('No WebSocket in these tests');
    }
  };
}
