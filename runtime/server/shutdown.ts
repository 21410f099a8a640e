/** Closing the HTTP server without cutting off requests it is still answering (up to a bound). */
import type { Server } from 'node:http';

/** How long in-flight requests may run on after SIGTERM before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 10_000;

/** How often idle keep-alive connections are closed while in-flight requests finish. */
const IDLE_SWEEP_MS = 50;

/**
 * Stops accepting connections and resolves once every connection is closed: idle ones at once,
 * busy ones when their response is done, and whatever is left after `graceMs` by force.
 */
export function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let sweep: NodeJS.Timeout | undefined;
    let force: NodeJS.Timeout | undefined;
    server.close((error) => {
      clearInterval(sweep);
      clearTimeout(force);
      if (error) reject(error);
      else resolve();
    });
    if (graceMs <= 0) {
      server.closeAllConnections();
      return;
    }
    server.closeIdleConnections();
    // A keep-alive connection turns idle when its response is done: close it then.
    sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    force = setTimeout(() => server.closeAllConnections(), graceMs);
  });
}
