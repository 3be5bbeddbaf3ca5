/**
 * Agones manifests: deploy/agones/ checked without a cluster.
 *
 * What is covered, exactly:
 * 1. Schema: the GameServer and the Fleet are validated with ajv against the openAPIV3Schema of Agones' own CRDs
 *    (test/fixtures/agones/crds.json, from Agones v1.56.0 install/yaml/install.yaml; see its $comment), the pod
 *    template included, with every object closed to fields the schema does not define (as a cluster with strict
 *    field validation refuses them; without it they would be dropped silently). The ConfigMap by kubernetes-models.
 * 2. What the schema cannot say: the health window against the watchdog's Agones.HealthSeconds, the GameServer's
 *    port against the instance's ApiPort, the container and ConfigMap names, the Fleet's template being the
 *    GameServer's spec, a grace period long enough for the graceful shutdown.
 * 3. The ConfigMap's appsettings.yml passes `watchdog check` in Agones mode (AGONES_SDK_HTTP_PORT set).
 * Not covered: admission in a real cluster (Agones' webhook defaults and its own validation, port ranges, quotas).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv, type ValidateFunction } from 'ajv';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse as parseYaml } from 'yaml';
import { ROOT } from '../_support/env.ts';

const run = promisify(execFile);
const DIR = join(ROOT, 'deploy/agones');
const test = suite('dist: deploy/agones');

type Json = Record<string, unknown>;
interface Port {
  name: string;
  containerPort: number;
  protocol?: string;
  portPolicy?: string;
}
interface GameServerSpec {
  container?: string;
  ports: Port[];
  health: { disabled?: boolean; initialDelaySeconds: number; periodSeconds: number; failureThreshold: number };
  template: {
    spec: {
      terminationGracePeriodSeconds?: number;
      containers: Array<{ name: string; volumeMounts?: Array<{ name: string; mountPath: string }> }>;
      volumes?: Array<{ name: string; configMap?: { name: string } }>;
    };
  };
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: Json;
}

/**
 * A copy of a CRD schema in which every object with `properties` refuses other keys (unless Kubernetes says it
 * keeps unknown fields), so a misspelt field fails here as it fails a cluster's strict field validation.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Json = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, closed(v)]));
  if (out.properties && out.additionalProperties === undefined && !out['x-kubernetes-preserve-unknown-fields'])
    out.additionalProperties = false;
  return out;
}

const crds = JSON.parse(await readFile(join(ROOT, 'test/fixtures/agones/crds.json'), 'utf8')) as {
  $defs: Json;
  GameServer: { apiVersion: string; schema: Json };
  Fleet: { apiVersion: string; schema: Json };
};
const ajv = new Ajv({ allErrors: true, strict: false });
for (const [name, bits] of [
  ['int32', 32],
  ['int64', 64],
] as const)
  ajv.addFormat(name, {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** (bits - 1),
  });
ajv.addFormat('int-or-string', true);
ajv.addFormat('date-time', true);

/** The kind's schema with the fields every object has (apiVersion, kind, metadata) that CRD schemas leave out. */
function validator(kind: 'GameServer' | 'Fleet'): ValidateFunction {
  const crd = crds[kind];
  const props = crd.schema.properties as Json;
  const root = {
    ...crd.schema,
    properties: {
      apiVersion: { type: 'string', enum: [crd.apiVersion] },
      kind: { type: 'string', enum: [kind] },
      metadata: { type: 'object' },
      ...props,
    },
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    $defs: crds.$defs,
  };
  return ajv.compile(closed(root) as Json);
}
const validate = { GameServer: validator('GameServer'), Fleet: validator('Fleet') };

const load = async <T>(file: string) => parseYaml(await readFile(join(DIR, file), 'utf8')) as T;
const gameServer = await load<Manifest>('gameserver.yaml');
const fleet = await load<Manifest>('fleet.yaml');
const configMap = await load<IConfigMap>('configmap.yaml');
const gsSpec = gameServer.spec as unknown as GameServerSpec;
const appsettings = parseYaml(configMap.data?.['appsettings.yml'] ?? '') as {
  Agones?: { HealthSeconds?: number };
  Servers: { Instances: Record<string, { ApiPort: number; Arguments?: string[] }> };
};

const problems = (fn: ValidateFunction, o: unknown) =>
  fn(o) ? [] : (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);

test('agones :: kustomization.yaml lists the ConfigMap and the Fleet, and every manifest is a file here', async () => {
  const k = await load<{ resources: string[] }>('kustomization.yaml');
  assert.equal([...k.resources].sort(), ['configmap.yaml', 'fleet.yaml']);
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
  assert.equal(files, ['configmap.yaml', 'fleet.yaml', 'gameserver.yaml']);
});

test('agones :: the GameServer and the Fleet validate against the Agones CRD schemas, closed to unknown fields', () => {
  assert.equal(problems(validate.GameServer, gameServer), [], 'gameserver.yaml');
  assert.equal(problems(validate.Fleet, fleet), [], 'fleet.yaml');
  new ConfigMap(configMap).validate();
});

test('agones :: the validator bites: a misspelt field, a wrong type and an unknown enum value are refused', () => {
  const broken = (edit: (spec: Json) => void) => {
    const copy = structuredClone(gameServer);
    edit(copy.spec);
    return problems(validate.GameServer, copy);
  };
  assert.ok(broken((s) => (s.helth = s.health)).some((p) => /additional properties/.test(p)));
  assert.ok(broken((s) => ((s.health as Json).periodSeconds = '5')).some((p) => /must be integer/.test(p)));
  assert.ok(broken((s) => ((s.ports as Json[])[0]!.protocol = 'SCTP')).some((p) => /allowed values/.test(p)));
  const pod = (s: Json) => (s.template as { spec: { containers: Json[] } }).spec.containers[0]!;
  assert.ok(broken((s) => (pod(s).imagePullPolice = 'Always')).some((p) => /additional properties/.test(p)));
});

test("agones :: the health window fits the watchdog's health interval", () => {
  const every = appsettings.Agones?.HealthSeconds ?? 2;
  const h = gsSpec.health;
  assert.not.ok(h.disabled, 'health checking on');
  assert.ok(h.periodSeconds > every, `a period (${h.periodSeconds} s) longer than the ping interval (${every} s)`);
  // Two pings lost in a row (a busy node) must not make the GameServer Unhealthy.
  assert.ok(h.periodSeconds * h.failureThreshold >= 3 * every, 'room for at least two lost pings');
  assert.ok(h.initialDelaySeconds >= every, 'the daemon has started before the first period is judged');
});

test("agones :: the GameServer's port is the instance's ApiPort, on TCP and UDP, and the names agree", () => {
  const instances = Object.entries(appsettings.Servers.Instances);
  assert.is(instances.length, 1, 'Agones mode wraps exactly one instance');
  const [, instance] = instances[0]!;
  const game = gsSpec.ports.find((p) => p.name === 'game');
  assert.ok(game, 'a port named game');
  assert.is(game.containerPort, instance.ApiPort);
  assert.is(game.protocol, 'TCPUDP', 'the engine: UDP game traffic and the TCP status API on one port number');
  assert.ok(instance.Arguments?.includes(`net.port=${instance.ApiPort}`), 'the server listens on that port');
  const pod = gsSpec.template.spec;
  assert.ok(
    pod.containers.some((c) => c.name === gsSpec.container),
    'spec.container names a container',
  );
  assert.is(pod.volumes?.find((v) => v.name === 'config')?.configMap?.name, configMap.metadata?.name);
  const mounts = pod.containers[0]?.volumeMounts?.map((m) => m.mountPath) ?? [];
  assert.ok(mounts.includes('/config') && mounts.includes('/data'), 'the image reads /config and works in /data');
  assert.ok((pod.terminationGracePeriodSeconds ?? 30) > 10, 'time for the graceful shutdown (5 s + 5 s)');
});

test("agones :: the Fleet's template is the GameServer's spec", () => {
  const template = (fleet.spec.template as { spec: unknown }).spec;
  assert.equal(template, gameServer.spec);
});

test("agones :: the ConfigMap's appsettings.yml passes `watchdog check` in Agones mode", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'wd-agones-'));
  try {
    const file = join(dir, 'appsettings.yml');
    await writeFile(file, configMap.data?.['appsettings.yml'] ?? '');
    const env = { PATH: process.env.PATH, HOME: dir, AGONES_SDK_HTTP_PORT: '9358' };
    const { stdout } = await run(process.execPath, [join(ROOT, 'bin/watchdog'), 'check', '--config', file], {
      cwd: dir,
      env,
    });
    assert.match(stdout, 'configuration is valid');
    assert.match(stdout, /agones:\s+on: wraps the one instance .*port 9358, \/health every 2 s/);
    assert.match(stdout, 'game');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
