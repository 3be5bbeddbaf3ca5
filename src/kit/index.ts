/**
 * `game-server-watchdog/kit` (also the package root): what a Node game server imports to speak the watchdog's and the
 * launcher's HTTP API; the probe, for launcher-side tools, is `game-server-watchdog/kit/probe`.
 */

// serve() spares a game server a second dependency, and one whose Hono might not match the kit's.
export { serve } from '@hono/node-server';
export {
  type AgonesMode,
  type AgonesModeOptions,
  agonesOptionsFrom,
  DEFAULT_AGONES_HEALTH_SECONDS,
  startAgonesMode,
} from './agones/mode.ts';
export { PLAYERS_KEY } from './agones/players.ts';
export { DEFAULT_RETRY, NO_RETRY, type RetryPolicy } from './agones/retry.ts';
export {
  AgonesSdk,
  AgonesSdkError,
  type AgonesSdkOptions,
  agonesPortFrom,
  type CallOptions,
  DEFAULT_AGONES_HTTP_PORT,
} from './agones/sdk.ts';
export type { WatchOptions } from './agones/watch.ts';
export {
  type Counter,
  type CounterUpdate,
  GAME_SERVER_STATES,
  type GameServer,
  type GameServerState,
} from './agones/wire.ts';
export type { ShutdownRequest, UpdateReason, UpdateRequest } from './api.ts';
export { createGameApi, type GameApiOptions, sameSecret, UPDATE_REASONS } from './api.ts';
export {
  type CheckinOptions,
  type CheckinResult,
  type Checkins,
  checkinOptionsFrom,
  checkinUrl,
  DEFAULT_CHECKIN_SECONDS,
  startCheckins,
} from './checkin.ts';
export {
  AUTH_MODES,
  type AuthMode,
  type Build,
  type Info,
  InfoSchema,
  LINK_ICONS,
  type Link,
  type LinkIcon,
  type PrivacyPolicy,
  type Problem,
  type Status,
  StatusSchema,
  type Validated,
  validateInfo,
  validateStatus,
} from './schemas.ts';
export {
  type CvarAssignment,
  type CvarDefault,
  type CvarOrigin,
  type LoadSettingsOptions,
  loadSettings,
  parseArgs,
  Settings,
  SettingsError,
} from './settings.ts';
export {
  inferTags,
  isRegionCode,
  languageName,
  NO_TAG_INFER,
  REGIONS,
  type RegionCode,
  type RegionTag,
  RP_LEVELS,
  regionName,
  regionsOf,
  type TagProblem,
  validateTags,
} from './tags.ts';
