import type { NotifyFormat } from '../../config/sections/notification.ts';

/** What every destination gets besides its target and the notice. */
export interface DeliveryContext {
  /** The instance's display name (`Name`), where it has one. */
  name?: string;
  /** A Webhook's shape; the other destinations have their own. */
  format: NotifyFormat;
  /** Per attempt: one HTTP request, one SMTP session, one run of a command. */
  timeoutMs: number;
  /** The most of an HTTP service's answer read (`Answers.NotificationMaxKilobytes`). */
  maxAnswerBytes: number;
  /** More certificate authorities for SMTP's TLS, beside the system's (a test's own; NODE_EXTRA_CA_CERTS otherwise). */
  ca?: string;
}
