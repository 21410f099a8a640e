/**
 * `WebSocket`, present so that libraries that look for it (Medplum's client keeps a
 * subscription manager on it) load; a bot cannot open connections, so constructing one throws.
 */
export class WebSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;

  constructor(url?: unknown) {
    throw new Error(
      `WebSocket connections are not available to bots (tried to open ${String(url)})`,
    );
  }
}
