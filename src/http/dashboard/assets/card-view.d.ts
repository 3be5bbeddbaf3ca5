// Types of card-view.js for the daemon's TypeScript (the page itself is plain JavaScript).
import type { InstanceStatus } from '../../../supervisor/status.ts';

/** What a card reads of an instance's status (`GET /api/instances`): these fields, and any other it is given. */
export type CardStatus = Pick<
  InstanceStatus,
  | 'key'
  | 'name'
  | 'state'
  | 'pid'
  | 'revision'
  | 'lastCheckinAt'
  | 'startedAt'
  | 'startupFailures'
  | 'restarts'
  | 'stopRequested'
  | 'canUpdate'
  | 'canRollback'
> &
  Partial<InstanceStatus>;

/** `hold` is one button for hold and release: its label says which. */
export type CardAction = 'restart' | 'update' | 'stop' | 'rollback' | 'hold';

export const PALETTE_SIZE: number;
export const ACTIONS: readonly CardAction[];
export function stateGroup(state: string): string;
export function actionBlockers(status: CardStatus, rights?: readonly string[]): Record<CardAction, string>;
export type Panel = 'log' | 'console' | 'backups' | 'backupNow' | 'restore' | 'files';
export function panelsAllowed(rights: readonly string[] | undefined): Record<Panel, boolean>;
export function actionLabel(action: CardAction, status: CardStatus): string;
export function cardFields(status: CardStatus, now: number): Record<string, string>;
export function shownName(status: CardStatus): string;
/** The hub listing of a server that advertises, one hub after another, at server time `now` (ms). */
export function hubText(hub: NonNullable<InstanceStatus['hub']>, now: number): string;
/** A pending maintenance action and what it waits for: `restart waits for the round end`. */
export function pendingText(pending: NonNullable<NonNullable<InstanceStatus['maintenance']>['pending']>): string;
