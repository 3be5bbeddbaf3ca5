/**
 * The Chromium the dashboard suites drive: `CHROMIUM_PATH` when set (a system Chromium), else the one that
 * `npm install` brings inside `@sparticuz/chromium` (a brotli-packed build it unpacks into the temp folder on first
 * use, about 2 s). Where neither starts, the dashboard suites are reported as skipped with the reason.
 */
import { accessSync, constants } from 'node:fs';

let reason = '';

/** Why no Chromium could be had, once `resolveChromium` returned null. */
export function chromiumUnavailable(): string {
  return reason;
}

/** The path of an executable Chromium, or null (and `chromiumUnavailable()` says why). */
export async function resolveChromium(): Promise<string | null> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    try {
      accessSync(configured, constants.X_OK);
      return configured;
    } catch (err) {
      reason = `CHROMIUM_PATH=${configured} is not an executable file (${(err as Error).message})`;
      return null;
    }
  }
  try {
    const { default: bundled } = await import('@sparticuz/chromium');
    return await bundled.executablePath();
  } catch (err) {
    reason = `cannot unpack the Chromium of @sparticuz/chromium (npm install brings it): ${(err as Error).message}`;
    return null;
  }
}
