/**
 * Sets `key` on `obj` as its own property, whatever the key. Configuration keys come from YAML and environment
 * variables, and plain assignment treats `__proto__` specially: `out.__proto__ = value` replaces the prototype, so
 * the key vanished (never reported as unknown), and merging into `{}.__proto__` would change Object.prototype itself.
 */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
