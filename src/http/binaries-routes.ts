import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { Hono } from 'hono';
import type { HttpDeps } from './deps.ts';
import { methodNotAllowed } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';
import { decodeSegments, resolveInside } from './safe-path.ts';

const contentType = (name: string): string =>
  name.toLowerCase().endsWith('.zip') ? 'application/zip' : 'application/octet-stream';

/**
 * `GET|HEAD /:key/binaries/*`, no auth, mounted at `/instances`: the files of the instance's `binaries/` folder
 * (the client zip the launcher downloads). Streams the file; never lists folders; nothing outside is reachable.
 */
/** This route for the OpenAPI document (route-doc.ts); HEAD is answered too. */
export const binariesRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/instances/{key}/binaries/{path}',
    tag: 'binaries',
    access: 'none',
    summary: 'a file of instances/<key>/binaries/ (no traversal, no listing, no hidden .-names)',
    responses: {
      200: { description: 'the file', media: 'application/octet-stream' },
      400: {
        description: 'bad percent-encoding, an empty or dot segment, or a separator inside a segment',
        json: 'Error',
      },
      404: { description: 'unknown instance, or no such (visible) file', json: 'Error' },
      ...errors(405, 503),
    },
  },
];

export function binariesRoutes({ registry }: HttpDeps): Hono {
  const app = new Hono();

  app.get('/:key/binaries/*', async (c) => {
    const instance = registry.get(c.req.param('key'));
    if (!instance && registry.starting?.(c.req.param('key'))) {
      c.header('Retry-After', '1');
      return c.json({ error: 'instance still starting; retry in a moment' }, 503);
    }
    if (!instance) return c.json({ error: 'unknown instance' }, 404);

    // The raw (still-encoded) path: ['', 'instances', key, 'binaries', ...file segments].
    const raw = new URL(c.req.url).pathname.split('/');
    if (raw[3] !== 'binaries') return c.json({ error: 'not found' }, 404);
    const decoded = decodeSegments(raw.slice(4));
    if (!decoded.ok) return c.json({ error: decoded.reason }, decoded.status);

    const found = await resolveInside(instance.binariesDir(), decoded.segments);
    if (found.kind !== 'ok') return c.json({ error: 'not found' }, 404);

    // O_NOFOLLOW: the checked real path cannot be swapped for a symlink between the check and the open.
    const file = await open(found.path, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
    if (!file) return c.json({ error: 'not found' }, 404);
    const stat = await file.stat().catch(() => null);
    if (!stat?.isFile()) {
      await file.close();
      return c.json({ error: 'not found' }, 404);
    }
    const headers = {
      'Content-Type': contentType(found.path),
      'Content-Length': String(stat.size),
      'Last-Modified': stat.mtime.toUTCString(),
    };
    // Hono answers HEAD by running this GET handler and dropping the body; do not open a stream nobody reads.
    if (c.req.method === 'HEAD') {
      await file.close();
      return c.body(null, 200, headers);
    }
    // createReadStream closes the handle at the end or when the client goes away (the web stream is cancelled).
    const web = Readable.toWeb(file.createReadStream()) as NodeReadableStream<Uint8Array>;
    // @types/node's web ReadableStream and the DOM-less global one are the same object at runtime but distinct types.
    return c.body(web as unknown as ReadableStream, 200, headers);
  });
  app.all('/:key/binaries/*', methodNotAllowed('GET, HEAD'));

  return app;
}
