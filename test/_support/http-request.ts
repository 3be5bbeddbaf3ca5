import { request } from 'node:http';

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
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: opts.method ?? 'GET',
        localAddress: opts.from,
        headers: { connection: 'close', ...opts.headers },
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
