/**
 * A writer's access as the store keeps it with a resource (WriteAuthor), and back: a
 * Subscription's matching and deliveries run later, in any process, with its author's access.
 */
import type { WriteAuthor } from '../store/write-operation.js';
import { Scopes } from './scopes.js';
import type { AccessClaims } from './token-service.js';

export function writeAuthor(access: AccessClaims): WriteAuthor {
  return { clientId: access.clientId, scope: access.scopes.toString(), admin: access.admin };
}

/** The author's access as it was when it wrote (in `projectId`); no token, so it does not expire. */
export function authorAccess(author: WriteAuthor, projectId?: string): AccessClaims {
  return {
    clientId: author.clientId,
    ...(projectId === undefined ? {} : { projectId }),
    scopes: Scopes.parse(author.scope),
    admin: author.admin,
    expires: Infinity,
  };
}
