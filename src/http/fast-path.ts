import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Answers a request on node:http before the Hono app sees it, or returns false to leave it to the app: for the few
 * requests that come all day (check-ins, health probes), whose answer the app's route also defines.
 */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The first of `paths` that answers. */
export const firstOf =
  (...paths: FastPath[]): FastPath =>
  (req, res) =>
    paths.some((p) => p(req, res));
