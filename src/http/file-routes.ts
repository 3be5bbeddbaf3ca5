import { type Context, Hono } from 'hono';
import type { InstanceControl } from '../supervisor/contract.ts';
import { type AdminEnv, adminAccess } from './admin-auth.ts';
import { instanceDir } from './api-routes.ts';
import { auditControl, type Caller } from './control.ts';
import type { HttpDeps } from './deps.ts';
import { apiToken, type InstanceEnv } from './instance-auth.ts';
import { remoteAddress, shownKey } from './request-info.ts';
import { needs } from './rights.ts';
import { errors, type RouteDoc } from './route-doc.ts';
import { openLocated, sendFile } from './safe-path.ts';
import { listFolder, listRoot, locate } from './shared-files.ts';

/**
 * One `Range: bytes=…` header against a file of `size` bytes (RFC 9110 §14.1.2): `part` is `start` to `end`
 * inclusive. Anything but a single range is answered with the whole file, which the RFC allows and which keeps the
 * answer a plain stream (no multipart body).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { kind: 'whole' } | { kind: 'part'; start: number; end: number } | { kind: 'unsatisfiable' } {
  if (header === undefined) return { kind: 'whole' };
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return { kind: 'whole' };
  const [, from, to] = m as unknown as [string, string, string];
  if (from === '' && to === '') return { kind: 'whole' };
  if (from === '') {
    // A suffix: the last `to` bytes.
    const n = Number(to);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (to !== '' && Number(to) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end };
}

const RESPONSES: RouteDoc['responses'] = {
  200: { description: 'a folder: its listing (JSON); a file: its bytes', json: 'FileListing' },
  206: {
    description: 'the single byte range the Range header asked for, with Content-Range',
    media: 'application/octet-stream',
  },
  400: 'bad percent-encoding, an empty or dot segment, a separator or NUL inside a segment, or bad credentials',
  ...errors(401),
  403: 'the credentials are refused, the path is not under a folder of Files.Folders, or it is neither a regular file nor a folder (a named pipe, a socket)',
  404: 'unknown instance, or nothing visible there (missing, hidden, or outside its folder)',
  ...errors(405, 416),
};

const summary = (via: string) =>
  `${via}: list a folder of Files.Folders (instances/<key>/…; the bare path lists the folders) or download a file below one (one byte range with Range); read-only`;

/** HEAD is answered too. */
export const fileRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /instances/{key}/files/{path}',
    tag: 'files',
    access: 'instance',
    summary: summary('the shared files'),
    responses: { ...RESPONSES, ...errors(503) },
  },
  {
    route: 'get /api/instances/{key}/files/{path}',
    tag: 'dashboard',
    access: 'admin',
    summary: summary("the dashboard's files"),
    responses: RESPONSES,
  },
];

/** `rawSegments` are the still-encoded segments after `files/`. A download is audited, as action `download`. */
async function answer(
  deps: HttpDeps,
  c: Context,
  instance: InstanceControl,
  rawSegments: string[],
  caller: Caller,
): Promise<Response> {
  const folders = instance.fileFolders?.() ?? [];
  const dir = instanceDir(instance);
  const where = await locate(dir, folders, rawSegments);
  if (where.kind === 'refused') return c.json({ error: where.reason }, where.status);
  if (where.kind === 'root') return c.json(await listRoot(dir, folders));

  const opened = await openLocated(where.path);
  if (!opened) return c.json({ error: 'not found' }, 404);
  if ('refused' in opened) return c.json({ error: `${where.relative}: ${opened.refused}` }, 403);
  const { file, stats } = opened;
  if (stats.isDirectory()) {
    await file.close();
    return c.json(await listFolder(where.path, where.relative));
  }
  const size = stats.size;
  const headers: Record<string, string> = {
    'Content-Type': 'application/octet-stream',
    'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(where.relative.split('/').at(-1) ?? '')}`,
    'Accept-Ranges': 'bytes',
    'Last-Modified': stats.mtime.toUTCString(),
  };
  const range = parseRange(c.req.header('range'), size);
  if (range.kind === 'unsatisfiable') {
    await file.close();
    return c.json({ error: `the range starts past the end of the file (${size} bytes)` }, 416, {
      'Content-Range': `bytes */${size}`,
    });
  }
  const [start, end, status] =
    range.kind === 'part' ? [range.start, range.end, 206 as const] : [0, size - 1, 200 as const];
  headers['Content-Length'] = String(size === 0 ? 0 : end - start + 1);
  if (status === 206) headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
  if (c.req.method !== 'HEAD' && size > 0)
    auditControl(deps.bus, instance.key, 'download', caller, { status }, { file: where.relative });
  return sendFile(c, file, status, headers, { start, end });
}

/** The raw segments after `files`, at `filesAt` in the split path. */
const segmentsAfter = (c: Context, filesAt: number): string[] =>
  new URL(c.req.url).pathname.split('/').slice(filesAt + 1);

/** `GET /instances/:key/files[/…]` and the dashboard's `/api/instances/:key/files[/…]`; mounted at `/`. */
export function fileRoutes(deps: HttpDeps): Hono {
  const api = new Hono<InstanceEnv>();
  // The wildcard matches the bare `…/files` too (the list of shared folders). Raw path: ['', 'instances', key, 'files', …].
  api.get('/instances/:key/files/*', apiToken(deps, 'status', 'GET /instances/:key/files/*'), (c) =>
    answer(deps, c, c.var.instance, segmentsAfter(c, 3), { user: c.var.user, remote: remoteAddress(c) }),
  );

  const dashboard = new Hono<AdminEnv>();
  const access = adminAccess(deps);
  dashboard.get('/api/instances/:key/files/*', access, needs(deps, 'GET /instances/:key/files/*'), async (c) => {
    const key = c.req.param('key') ?? '';
    const instance = deps.registry.get(key);
    if (!instance) return c.json({ error: `no instance ${shownKey(key)}` }, 404);
    // Raw path: ['', 'api', 'instances', key, 'files', …].
    return answer(deps, c, instance, segmentsAfter(c, 4), { user: c.var.adminUser, remote: remoteAddress(c) });
  });

  return new Hono().route('/', api).route('/', dashboard);
}
