/**
 * What the signed-in token may do, as the server decides it (docs/access.md): its scopes for
 * every interaction; a Bot's writes also need admin rights, and running a bot reading Bot plus
 * `system/Bot.$execute` or admin rights. The app offers only what these allow.
 */
import { EXECUTE } from '../../../runtime/access/scopes.js';
import type { Session } from './session.js';

export type Action = 'create' | 'read' | 'update' | 'delete' | 'search';

const LETTER = { create: 'c', read: 'r', update: 'u', delete: 'd', search: 's' } as const;

export function can(session: Session, action: Action, type: string): boolean {
  if (!session.scopes.allows(type, LETTER[action])) return false;
  const writesBot = type === 'Bot' && action !== 'read' && action !== 'search';
  return !writesBot || session.admin;
}

export function canExecuteBots(session: Session): boolean {
  return (
    session.scopes.allows('Bot', 'r') && (session.admin || session.scopes.allows('Bot', EXECUTE))
  );
}
