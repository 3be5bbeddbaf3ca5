// Types of card-view.js for the daemon's TypeScript (the page itself is plain JavaScript).

/** What a card reads of an instance's status (`GET /api/instances`). */
export interface CardStatus {
  key: string;
  name: string;
  state: string;
  pid: number | null;
  revision: string | null;
  lastCheckinAt: string | null;
  startedAt: string | null;
  startupFailures: number;
  restarts: number;
  stopRequested: boolean;
  /** Why and how the last server process ended (older daemons leave it out). */
  lastExit?: { reason: string; code: number | null; signal: string | null; at: string } | null;
  canUpdate?: boolean;
  canRollback?: boolean;
}

export type CardAction = 'restart' | 'update' | 'stop' | 'rollback';

export const PALETTE_SIZE: number;
export const ACTIONS: readonly CardAction[];
export function stateGroup(state: string): string;
export function actionBlockers(status: CardStatus): Record<CardAction, string>;
export function actionLabel(action: CardAction, status: CardStatus): string;
export function cardFields(status: CardStatus, now: number): Record<string, string>;
export function shownName(status: CardStatus): string;
