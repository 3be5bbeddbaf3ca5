// Types of shared.js's formatters for the daemon's TypeScript (the page itself is plain JavaScript).

/** `42 s`, `3 min 5 s`, `2 h 5 min`, `1 d 3 h`. */
export function formatDuration(seconds: number): string;
/** Decimal units, as src/store/disk-space.ts writes them: `120 MB`, `9.8 GB`, `512 bytes`. */
export function formatBytes(bytes: number): string;
