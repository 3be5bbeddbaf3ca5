import selfsigned from 'selfsigned';
import { SMTPServer } from 'smtp-server';

/**
 * A certificate for 127.0.0.1 made now, in JavaScript (smtp-server's bundled one has expired, and a fresh machine
 * need not have the openssl program); `cert` is also its own CA.
 */
export async function loopbackCert(): Promise<{ key: string; cert: string }> {
  const now = new Date();
  const pems = await selfsigned.generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + 2 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

export interface SmtpReceiver {
  port: number;
  /** Mails accepted: the envelope, whether the session had switched to TLS (STARTTLS), and the raw message. */
  mails: Array<{ from: string; to: string[]; secure: boolean; user: string | undefined; raw: string }>;
  /** How many mails were refused with a 4xx (try later). */
  deferred(): number;
  close(): Promise<void>;
}

/**
 * The `smtp-server` library on loopback, offering STARTTLS with `tls`, requiring a login (`user`/`pass`) and only
 * after TLS; its first `deferFirst` mails are answered 451 (try again later), any mail to `refuse` 550.
 */
export async function startSmtp(opts: {
  tls: { key: string; cert: string };
  user: string;
  pass: string;
  deferFirst?: number;
  refuse?: string;
}): Promise<SmtpReceiver> {
  const mails: SmtpReceiver['mails'] = [];
  let deferred = 0;
  const server = new SMTPServer({
    ...opts.tls,
    secure: false,
    authMethods: ['PLAIN', 'LOGIN'],
    // Login in the clear is refused: the password must only travel after STARTTLS.
    allowInsecureAuth: false,
    disabledCommands: [],
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === opts.user && auth.password === opts.pass) return cb(null, { user: auth.username });
      cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, cb) {
      if (opts.refuse && address.address === opts.refuse)
        return cb(Object.assign(new Error('No such user here'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (d: Buffer) => chunks.push(d));
      stream.on('end', () => {
        if (deferred < (opts.deferFirst ?? 0)) {
          deferred++;
          return cb(Object.assign(new Error('Greylisted, try again later'), { responseCode: 451 }));
        }
        const from = session.envelope.mailFrom;
        mails.push({
          from: from ? from.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return { port, mails, deferred: () => deferred, close: () => new Promise((r) => server.close(() => r())) };
}
