#!/usr/bin/env node
/**
 * A loopback stand-in for a CDN: serves the files of one folder (GET/HEAD /<name>, Content-Length, no caching,
 * re-read on every request so the bench can rewrite manifest.json between runs). Usage: static-server.mjs <dir>;
 * prints `listening <port>`. Both the watchdog and the shell baseline download from it.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join, normalize } from 'node:path';

const root = process.argv[2];
if (!root) throw new Error('usage: static-server.mjs <dir>');

const server = createServer(async (req, res) => {
  const name = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^\/+/, '');
  if (name === '' || name.startsWith('..') || name.includes('/..')) {
    res.writeHead(404).end();
    return;
  }
  const file = join(root, name);
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) {
    res.writeHead(404).end();
    return;
  }
  const type = name.endsWith('.json') ? 'application/json' : 'application/octet-stream';
  res.writeHead(200, { 'Content-Length': info.size, 'Content-Type': type, 'Cache-Control': 'no-store' });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(file).pipe(res);
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
