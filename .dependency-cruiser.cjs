/**
 * The layer rules of README "Layers", checked by `npm run lint:deps` (dependency-cruiser) in .ci/run.
 * Layers, bottom up; a module may import its own layer and the layers below, never one above:
 *   base        machines/ (pure statecharts), src/errors.ts, src/log.ts, src/bus.ts, src/disk-reading.ts, src/clock.ts,
 *               src/regular-file.ts, src/make-dir.ts, src/capped-map.ts
 *   config      src/config/
 *   services    src/process/, src/store/, src/auth/, src/updates/, src/backups/, src/hub/, src/notify/, src/chart/, src/import/, src/kit/
 *   instance    src/supervisor/ (contract.ts and status.ts are what the layers above read of an instance)
 *   views       src/metrics/ and src/agones/ (the Agones wrapper), then src/http/
 *   roots       src/daemon/ (composition), then src/cli/; src/demo/ stands apart, on the kit alone
 * TypeScript 7 has no JS API, so sources are parsed with swc (@swc/core).
 */
const BASE_FILES = '^src/(errors|log|bus|disk-reading|clock|regular-file|make-dir|capped-map)[.]ts$';
const ABOVE_CONFIG = '^src/(process|store|auth|updates|backups|hub|notify|chart|import|kit|supervisor|metrics|agones|http|daemon|cli|demo)/';
const ABOVE_SERVICES = '^src/(supervisor|metrics|agones|http|daemon|cli|demo)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles hide which module depends on which. A lazy import() back (the CLI command table) is not one.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['dynamic-import'] } },
    },
    {
      name: 'machines-are-pure',
      severity: 'error',
      comment: 'The statecharts know no daemon code: the supervisor provides their actors.',
      from: { path: '^machines/' },
      to: { path: '^(src|test|bench)/' },
    },
    {
      name: 'base-imports-nothing-above',
      severity: 'error',
      comment: 'errors, log and bus are the floor every layer stands on.',
      from: { path: BASE_FILES },
      to: { path: '^src/', pathNot: BASE_FILES },
    },
    {
      name: 'config-below-services',
      severity: 'error',
      comment: 'One exception: src/kit/agones/port.ts, an import-free leaf, so the kit and the config read AGONES_SDK_HTTP_PORT alike.',
      from: { path: '^src/config/' },
      to: { path: ABOVE_CONFIG, pathNot: '^src/kit/agones/port[.]ts$' },
    },
    {
      name: 'services-below-instance',
      severity: 'error',
      comment: 'Processes, storage, accounts, updates, chat, charts and the import do not know the supervisor, HTTP or the CLI.',
      from: { path: '^src/(process|store|auth|updates|backups|hub|notify|chart|import)/' },
      to: { path: ABOVE_SERVICES },
    },
    {
      name: 'kit-stands-alone',
      severity: 'error',
      comment: 'The game-server kit ships to game servers: no daemon code inside (the logger and the clock only).',
      from: { path: '^src/kit/' },
      to: { path: '^src/', pathNot: '^src/(kit/|(log|clock)[.]ts$)' },
    },
    {
      name: 'demo-on-the-kit',
      severity: 'error',
      comment: 'The demo game server is built on the kit alone.',
      from: { path: '^src/demo/' },
      to: { path: '^src/', pathNot: '^src/(demo/|kit/|(log|clock)[.]ts$)' },
    },
    {
      name: 'instance-below-views',
      severity: 'error',
      from: { path: '^src/supervisor/' },
      to: { path: '^src/(metrics|agones|http|daemon|cli|demo)/' },
    },
    {
      name: 'views-read-the-contract',
      severity: 'error',
      comment: 'metrics/, agones/, http/ and cli/ see an instance through src/supervisor/contract.ts and status.ts only; the daemon wires the rest.',
      from: { path: '^src/(metrics|agones|http|cli)/' },
      to: { path: '^src/supervisor/', pathNot: '^src/supervisor/(contract|status)[.]ts$' },
    },
    { name: 'metrics-below-http', severity: 'error', from: { path: '^src/metrics/' }, to: { path: '^src/(agones|http|daemon|cli|demo)/' } },
    {
      name: 'agones-below-http',
      severity: 'error',
      comment: 'The Agones wrapper reads the bus and the contract; the daemon wires it and adds its part to the status.',
      from: { path: '^src/agones/' },
      to: { path: '^src/(metrics|http|daemon|cli|demo)/' },
    },
    { name: 'http-below-daemon', severity: 'error', from: { path: '^src/http/' }, to: { path: '^src/(daemon|cli|demo)/' } },
    { name: 'daemon-below-cli', severity: 'error', from: { path: '^src/daemon/' }, to: { path: '^src/(cli|demo)/' } },
    {
      name: 'no-tests-in-production',
      severity: 'error',
      comment: 'Production code never imports test or bench code.',
      from: { path: '^(src|machines)/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    // Declarations carry no runtime imports (their .js is cruised), and swc does not parse ambient ones.
    exclude: { path: ['node_modules', '[.]d[.]ts$'] },
    moduleSystems: ['es6'],
  },
};
