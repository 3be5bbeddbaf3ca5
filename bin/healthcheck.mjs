#!/usr/bin/env node
// The container's HEALTHCHECK: exit 0 when the daemon's GET /health answers 200, else 1. In JavaScript because
// the slim image has no curl or wget. The address follows the daemon's: WATCHDOG_HEALTH_URL if set, else the
// first of ASPNETCORE_URLS (or DOTNET_URLS), which the image sets and operators override, else port 5000. A
// wildcard host (`*`, `+`, 0.0.0.0, [::]) is asked on the loopback, which it includes.
const env = process.env;

function healthUrl() {
  if (env.WATCHDOG_HEALTH_URL) return env.WATCHDOG_HEALTH_URL;
  const first = (env.ASPNETCORE_URLS || env.DOTNET_URLS || 'http://127.0.0.1:5000').split(';')[0].trim();
  const m = /^(https?):\/\/(\[[^\]]*\]|[^:/]*)(?::(\d+))?/i.exec(first);
  if (!m) return 'http://127.0.0.1:5000/health';
  const [, scheme, rawHost, port] = m;
  const wildcard = ['*', '+', '0.0.0.0', '[::]', ''].includes(rawHost);
  const host = wildcard ? '127.0.0.1' : rawHost;
  return `${scheme}://${host}:${port || (scheme === 'https' ? '443' : '80')}/health`;
}

try {
  const res = await fetch(healthUrl(), { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  console.error(`healthcheck: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
