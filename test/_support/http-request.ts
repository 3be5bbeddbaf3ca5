import { globalAgent, request } from 'node:http';

export interface RawRequest {
  method?: string;
  /** The local address to send from (a loopback address other than 127.0.0.1, to look like another client). */
  from?: string;
  headers?: Record<string, string>;
}

/**
 * One plain HTTP request to `url` on a fresh connection, with exactly the headers given (no fetch defaults such as
 * Origin handling), within 5 s; resolves with the status and the body.
 */
export function rawRequest(url: URL, opts: RawRequest = {}): Promise<{ status: number; body: string }> {
  return send(url, opts, false);
}

/**
 * A request as a client that polls sends it: over node:http on a kept-alive connection, within 5 s. A fetch costs
 * the test's process about a millisecond of CPU more, and the suite's tests poll statuses thousands of times.
 */
export function pollRequest(url: URL, opts: RawRequest = {}): Promise<{ status: number; body: string }> {
  return send(url, opts, true);
}

function send(url: URL, opts: RawRequest, keepAlive: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: opts.method ?? 'GET',
        localAddress: opts.from,
        headers: keepAlive ? opts.headers : { connection: 'close', ...opts.headers },
        agent: keepAlive ? globalAgent : false,
        timeout: 5000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
    req.end();
  });
}
