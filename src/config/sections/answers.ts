import * as v from 'valibot';
import { amount, seconds } from '../numbers.ts';

/** A size cap in kilobytes (decimal: 1 kB = 1,000 bytes), whole, from 1 kB to 1 GB; `def` when absent. */
const Kilobytes = (def: number) =>
  v.optional(
    amount('kilobytes', {
      whole: true,
      min: 1,
      max: 1_000_000,
      tooBig: 'expected at most 1000000 kilobytes (1 GB): an answer is held in memory whole',
    }),
    def,
  );

/**
 * `Answers`: how much of an HTTP answer the daemon reads, and how long it waits for it whole; past its cap an answer
 * is cut off and the error names the key. Read at each request (a reload applies at the next one).
 */
export const AnswersSchema = v.strictObject(
  {
    /** A game server's own API: `GET /status` (a few kB), `POST /update` and `/shutdown` (a word). */
    ServerMaxKilobytes: Kilobytes(256),
    /** A server's `GET /status` (its player count; a busy game loop may be slow), never longer than its interval. */
    ServerTimeoutSeconds: seconds(5),
    /** A hub's listing answer (`api/servers/info`, under 10 kB on SS14.ServerHub). */
    HubMaxKilobytes: Kilobytes(64),
    HubTimeoutSeconds: seconds(10),
    /** A chat service's or webhook's answer to a notification (the message it posted). */
    NotificationMaxKilobytes: Kilobytes(64),
    /** The daemon's own `GET <BaseUrl>/health`, asked once at start (under 1 kB). */
    BaseUrlMaxKilobytes: Kilobytes(64),
    BaseUrlTimeoutSeconds: seconds(3),
    /** An OpenID provider's discovery, JWKS and token answers (a few kB each); a login waits on them. */
    OidcMaxKilobytes: Kilobytes(256),
    OidcTimeoutSeconds: seconds(10),
  },
  'expected a map of answer caps',
);

export type AnswersSettings = v.InferOutput<typeof AnswersSchema>;

export type AnswerCap = ReturnType<typeof answerCap>;

/** The caps of `reader` (`Hub`, `Oidc`, …) in bytes and ms, and the key an answer past the size cap names. */
export function answerCap(a: AnswersSettings, reader: 'Server' | 'Hub' | 'BaseUrl' | 'Oidc') {
  return {
    maxBytes: a[`${reader}MaxKilobytes`] * 1000,
    timeoutMs: a[`${reader}TimeoutSeconds`] * 1000,
    setting: `Answers.${reader}MaxKilobytes`,
  };
}
