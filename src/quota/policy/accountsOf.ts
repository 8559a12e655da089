import type { Operation } from './Operation.js';

/** A user or group whose quota an operation's units count against. */
export interface Account {
  scope: 'user' | 'group';
  id: string;
}

/**
 * Rule 8: a group quota is shared by its members and each member's consumption is subtracted
 * from it, so every unit counts once for the user and once more for the group, when there is one.
 */
export function accountsOf(op: Pick<Operation, 'user' | 'group'>): Account[] {
  const accounts: Account[] = [{ scope: 'user', id: op.user }];
  if (op.group !== undefined) accounts.push({ scope: 'group', id: op.group });
  return accounts;
}
