/**
 * Kubernetes manifests: deploy/kubernetes/ checked without a cluster.
 *
 * What is covered, exactly:
 * 1. Schema: every object is validated by kubernetes-models (4.5.1), whose validators are compiled from the
 *    Kubernetes OpenAPI schemas: required fields, types, enums and formats, nested all the way down.
 * 2. Unknown fields (which those schemas allow, and a cluster with strict field validation refuses): the same
 *    objects type-checked by tsc against kubernetes-models' TypeScript interfaces, generated from the same
 *    schemas, as object literals, so a misspelt field anywhere is an excess-property error.
 * 3. References between the objects and the image: selectors and labels, the governing Service, port names,
 *    the ConfigMap, Secret and volume claim the pod uses, /config and /data as the Dockerfile's CMD and WORKDIR
 *    expect, the probes on /health, a non-root user that the image's uid matches.
 * 4. The configuration: the ConfigMap's appsettings.yml, with the Secret's variables as the environment,
 *    passes `watchdog check`, as the daemon in the pod would read it.
 * Not covered: admission in a real cluster (quotas, storage classes, policies), and kustomize's own format
 * beyond its resource list naming exactly the files here.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type IStatefulSet, StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { type ISecret, Secret } from 'kubernetes-models/v1/Secret';
import { type IService, Service } from 'kubernetes-models/v1/Service';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { finalStage, parseStages } from '../_support/dockerfile.ts';
import { ROOT } from '../_support/env.ts';

const run = promisify(execFile);
const DIR = join(ROOT, 'deploy/kubernetes');
const test = suite('dist: deploy/kubernetes');

type Manifest = { apiVersion: string; kind: string; metadata: { name: string } };
interface Loaded {
  file: string;
  object: Manifest;
}

interface Model {
  validate: (o: Manifest) => void;
  iface: string;
  from: string;
}

/** A kubernetes-models class checks a manifest; `I<Kind>` of module `from` is its TypeScript interface. */
const model = (Kind: new (o: never) => { validate(): void }, from: string): Model => ({
  validate: (o) => new Kind(o as never).validate(),
  iface: `I${from.split('/').pop()}`,
  from,
});

/** The model (and its TypeScript interface's import) for each kind the manifests use. */
const MODELS: Record<string, Model> = {
  'apps/v1 StatefulSet': model(StatefulSet, 'kubernetes-models/apps/v1/StatefulSet'),
  'v1 Service': model(Service, 'kubernetes-models/v1/Service'),
  'v1 ConfigMap': model(ConfigMap, 'kubernetes-models/v1/ConfigMap'),
  'v1 Secret': model(Secret, 'kubernetes-models/v1/Secret'),
};

async function loadAll(): Promise<Loaded[]> {
  const out: Loaded[] = [];
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(DIR, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      out.push({ file, object: doc.toJS() as Manifest });
    }
  }
  return out;
}

const all = await loadAll();
const ofKind = <T>(kind: string): T[] => all.filter((m) => m.object.kind === kind).map((m) => m.object as unknown as T);
const statefulSet = ofKind<IStatefulSet>('StatefulSet')[0]!;
const services = ofKind<IService>('Service');
const configMap = ofKind<IConfigMap>('ConfigMap')[0]!;
const secret = ofKind<ISecret>('Secret')[0]!;
const pod = statefulSet.spec!.template.spec!;
const container = pod.containers[0]!;

test('kubernetes :: kustomization.yaml lists exactly the manifests of the folder', async () => {
  const k = parseYaml(await readFile(join(DIR, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  assert.equal([...k.resources].sort(), [...new Set(all.map((m) => m.file))].sort());
});

test('kubernetes :: every object validates against the Kubernetes OpenAPI schemas', () => {
  assert.ok(
    statefulSet && configMap && secret && services.length === 2,
    'a StatefulSet, 2 Services, a ConfigMap, a Secret',
  );
  for (const { file, object } of all) {
    const model = MODELS[`${object.apiVersion} ${object.kind}`];
    assert.ok(model, `${file}: ${object.apiVersion} ${object.kind} is a kind this test knows`);
    try {
      model.validate(object);
    } catch (err) {
      assert.unreachable(`${file}: ${object.kind} ${object.metadata.name}: ${(err as Error).message}`);
    }
  }
});

test('kubernetes :: no field the Kubernetes API does not define (tsc excess-property check against the generated types)', async () => {
  // Inside the checkout, so kubernetes-models resolves from its node_modules; .tmp/ is git-ignored.
  await mkdir(join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(join(ROOT, '.tmp', 'k8s-types-'));
  try {
    const imports = Object.values(MODELS).map((m) => `import type { ${m.iface} } from '${m.from}';`);
    const checks = all.map(({ object }, i) => {
      const model = MODELS[`${object.apiVersion} ${object.kind}`]!;
      return `export const o${i}: ${model.iface} = ${JSON.stringify(object, null, 2)};`;
    });
    await writeFile(join(dir, 'manifests.ts'), [...imports, ...checks, ''].join('\n'));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const flags = [
      '--ignoreConfig',
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--skipLibCheck',
    ];
    const r = await run(process.execPath, [tsc, ...flags, '--types', '', join(dir, 'manifests.ts')], {
      cwd: dir,
    }).catch((err: { stdout: string; stderr: string }) => ({ ...err, failed: true }));
    assert.not.ok('failed' in r, `unknown or mistyped fields:\n${r.stdout}${r.stderr}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('kubernetes :: the objects refer to each other and to the image consistently', async () => {
  const spec = statefulSet.spec!;
  const podLabels = spec.template.metadata?.labels ?? {};
  const selects = (selector: Record<string, string> | undefined) =>
    Object.entries(selector ?? {}).every(([k, v]) => podLabels[k] === v) && Object.keys(selector ?? {}).length > 0;
  assert.ok(selects(spec.selector.matchLabels), 'the StatefulSet selects its own pods');
  assert.is(spec.replicas, 1, 'one daemon per instance folder');
  const governing = services.find((s) => s.metadata?.name === spec.serviceName);
  assert.is(governing?.spec?.clusterIP, 'None', 'serviceName names a headless Service');
  const portNames = new Set((container.ports ?? []).map((p) => p.name));
  for (const s of services) {
    assert.ok(selects(s.spec?.selector), `Service ${s.metadata?.name} selects the pod`);
    for (const p of s.spec?.ports ?? []) {
      assert.ok(portNames.has(String(p.targetPort)), `Service ${s.metadata?.name} port ${p.name} targets a named port`);
      const target = container.ports?.find((c) => c.name === p.targetPort);
      assert.is(target?.protocol ?? 'TCP', p.protocol ?? 'TCP', `${p.name}: same protocol`);
    }
  }

  // Volumes: /config from the ConfigMap, /data from the claim template, as the image expects.
  const image = finalStage(parseStages(await readFile(join(ROOT, 'Dockerfile'), 'utf8')));
  const configArg = image.cmd[image.cmd.indexOf('--config') + 1] ?? '';
  const mountOf = (path: string) => container.volumeMounts?.find((m) => m.mountPath === path);
  const configMount = mountOf(configArg.slice(0, configArg.lastIndexOf('/')));
  assert.ok(configMount, `the folder of ${configArg} is mounted`);
  const configVolume = pod.volumes?.find((v) => v.name === configMount.name);
  assert.is(configVolume?.configMap?.name, configMap.metadata?.name, 'from the ConfigMap');
  assert.ok(configMap.data?.[configArg.slice(configArg.lastIndexOf('/') + 1)], `the ConfigMap holds ${configArg}`);
  const dataMount = mountOf(image.workdir);
  assert.ok(dataMount, `the image WORKDIR ${image.workdir} (instances/) is mounted`);
  assert.ok(
    spec.volumeClaimTemplates?.some((c) => c.metadata?.name === dataMount.name),
    'from a volume claim template, so it persists with the pod',
  );
  assert.equal(
    container.envFrom?.map((e) => e.secretRef?.name),
    [secret.metadata?.name],
    'the Secret is the environment',
  );
  assert.not.ok(container.command ?? container.args, "the image's ENTRYPOINT and CMD run unchanged");

  // Probes on /health, on the port the image listens on.
  const imagePort = Number(/:(\d+)/.exec(image.env.ASPNETCORE_URLS ?? '')?.[1]);
  assert.is(container.ports?.find((p) => p.name === 'http')?.containerPort, imagePort, 'http is the image port');
  for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
    assert.equal(probe?.httpGet && { path: probe.httpGet.path, port: probe.httpGet.port }, {
      path: '/health',
      port: 'http',
    });
  }
  // The image's user is `node`, uid 1000; the pod runs as that uid and owns the volume through fsGroup.
  assert.is(image.user, 'node');
  assert.ok(
    pod.securityContext?.runAsNonRoot && pod.securityContext.runAsUser === 1000 && pod.securityContext.fsGroup === 1000,
  );
  assert.ok((pod.terminationGracePeriodSeconds ?? 30) > 10, 'time for the graceful shutdown (5 s + 5 s)');
});

test("kubernetes :: the ConfigMap's appsettings.yml, with the Secret as environment, passes `watchdog check`", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'wd-k8s-'));
  try {
    await mkdir(join(dir, 'config'));
    const file = join(dir, 'config/appsettings.yml');
    await writeFile(file, configMap.data!['appsettings.yml']!);
    const env = { PATH: process.env.PATH, HOME: dir, ...secret.stringData };
    const { stdout } = await run(process.execPath, [join(ROOT, 'bin/watchdog'), 'check', '--config', file], {
      cwd: dir,
      env,
    });
    assert.match(stdout, 'configuration is valid');
    assert.match(stdout, 'community');
    assert.match(stdout, /api token:\s+set/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
