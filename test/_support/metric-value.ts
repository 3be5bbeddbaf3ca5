/** One sample of the daemon's /metrics (loopback, no Admin configured): the value of `name{labels}`, or null. */
export async function metricValue(url: string, name: string, labels: Record<string, string>): Promise<number | null> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.indexOf('}'));
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`))) return Number(line.split(' ').pop());
  }
  return null;
}
