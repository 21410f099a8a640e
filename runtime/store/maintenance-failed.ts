/**
 * Told when background upkeep of the database fails (planner statistics, folding the kept token
 * counts). Such work leaves the data exact when it fails and is tried again later, so a failure
 * is not an error of any request; the server logs it, so that one that keeps failing is seen.
 */
export type MaintenanceFailed = (
  work: string,
  error: unknown,
  context?: Record<string, unknown>,
) => void;
