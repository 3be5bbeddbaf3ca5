import type { resolveConfig } from './load.ts';

/** The daemon's configuration after layering, validation and resolution (load.ts). */
export type ResolvedConfig = ReturnType<typeof resolveConfig>;
/** One instance, every path absolute and its token read. */
export type ResolvedInstance = ResolvedConfig['instances'][number];
