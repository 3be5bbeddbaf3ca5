import { createRequire } from 'node:module';
import type * as Nodemailer from 'nodemailer';
import type { Notice } from '../../bus.ts';
import { plainText, viewOf } from '../payload.ts';
import type { TargetOf } from '../routes.ts';
import { type Attempt, DELIVERED, type Delivery, type DeliveryContext, failed } from '../sender.ts';

const load = createRequire(import.meta.url);

/** A failed send as an attempt: an SMTP 4xx or a lost connection is tried again, a 5xx is final. */
function smtpAttempt(err: unknown): Attempt {
  const code = typeof err === 'object' && err !== null ? Reflect.get(err, 'responseCode') : undefined;
  const name = typeof err === 'object' && err !== null ? Reflect.get(err, 'code') : undefined;
  // Only codes: the message can quote the server, which may echo the login.
  if (typeof code === 'number' && code >= 400) return failed(`SMTP ${code}`, code < 500);
  return failed(`SMTP ${String(name ?? 'connection failed')}`, true);
}

/**
 * One mail per notice, the title as its subject, through nodemailer (a connection per message: alerts are rare;
 * STARTTLS when an smtp:// server offers it). Closed when the sender stops, so a hung server holds up no shutdown.
 */
export function emailDelivery(t: TargetOf<'Email'>, n: Notice, ctx: DeliveryContext): Delivery {
  const view = viewOf(n, ctx.name);
  const mail = { from: t.From, to: t.To, subject: view.title, text: plainText(view, false) };
  return async (signal) => {
    // Loaded at the first mail: nodemailer is ~300 KB of code, ~2 MB that a daemon without an Email route would
    // hold while it idles (bench/footprint.ts). Required, not imported: Node keeps a failed import() failed for the
    // process (EMFILE under descriptor pressure would fail every later mail); a failed require is tried afresh.
    const { createTransport } = load('nodemailer') as typeof Nodemailer;
    const transport = createTransport({
      url: t.Smtp,
      connectionTimeout: ctx.timeoutMs,
      greetingTimeout: ctx.timeoutMs,
      socketTimeout: ctx.timeoutMs,
      ...(ctx.ca ? { tls: { ca: ctx.ca } } : {}),
    });
    const close = () => transport.close();
    signal.addEventListener('abort', close, { once: true });
    try {
      await transport.sendMail(mail);
      return DELIVERED;
    } catch (err) {
      return smtpAttempt(err);
    } finally {
      signal.removeEventListener('abort', close);
      transport.close();
    }
  };
}
