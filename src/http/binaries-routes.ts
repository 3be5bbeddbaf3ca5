import { Hono } from 'hono';
import type { HttpDeps } from './deps.ts';
import { denied, instanceFor } from './instance-auth.ts';
import { errors, type RouteDoc } from './route-doc.ts';
import { decodeSegments, openLocated, resolveInside, sendFile } from './safe-path.ts';

/** HEAD is answered too. */
export const binariesRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /instances/{key}/binaries/{path}',
    tag: 'binaries',
    access: 'none',
    summary: 'a file of instances/<key>/binaries/ (no traversal, no listing, no hidden .-names)',
    responses: {
      200: { description: 'the file', media: 'application/octet-stream' },
      400: 'bad percent-encoding, an empty or dot segment, or a separator inside a segment',
      404: 'unknown instance, or no such (visible) file',
      ...errors(405, 503),
    },
  },
];

/** `GET /:key/binaries/*`, no auth, mounted at `/instances`: the files the launcher downloads, never a listing. */
export function binariesRoutes({ registry }: HttpDeps): Hono {
  const app = new Hono();

  app.get('/:key/binaries/*', async (c) => {
    const known = instanceFor(c.req.param('key'), registry, '');
    if (!known.ok) return denied(c, known.status, known.reason);
    const { instance } = known;

    // The raw (still-encoded) path: ['', 'instances', key, 'binaries', ...file segments].
    const raw = new URL(c.req.url).pathname.split('/');
    if (raw[3] !== 'binaries') return c.json({ error: 'not found' }, 404);
    const decoded = decodeSegments(raw.slice(4));
    if (!decoded.ok) return c.json({ error: decoded.reason }, decoded.status);

    const found = await resolveInside(instance.binariesDir(), decoded.segments);
    const opened = found === null ? null : await openLocated(found);
    if (opened === null || 'refused' in opened || !opened.stats.isFile()) {
      if (opened && 'file' in opened) await opened.file.close();
      return c.json({ error: 'not found' }, 404);
    }
    const { file, stats } = opened;
    return sendFile(c, file, 200, {
      'Content-Type': found?.toLowerCase().endsWith('.zip') ? 'application/zip' : 'application/octet-stream',
      'Content-Length': String(stats.size),
      'Last-Modified': stats.mtime.toUTCString(),
    });
  });

  return app;
}
