import { hashPassword } from '../../../src/auth/password.ts';

/** The cheapest cost the users file accepts: tests hash many passwords and check them on every request. */
export const FAST = { N: 1024, r: 1, p: 1 } as const;

export const fastHash = (password: string): Promise<string> => hashPassword(password, FAST);
