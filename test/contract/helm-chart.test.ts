import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { EnvSchema } from '../../src/config/env-schema.js';

// @ts-expect-error plain ESM script without types
const tools = (await import('../../scripts/services.mjs')) as {
  ensureHelm: () => Promise<string>;
  ensureKubeconform: () => Promise<string>;
  ensureKubernetesSchemas: (versions: string[]) => string;
};

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const chart = path.join(root, 'deploy', 'helm', 'consult');
const variantValues = path.join(chart, 'ci', 'variant-values.yaml');
/** The oldest Kubernetes release the chart supports (Chart.yaml kubeVersion) and the newest with schemas. */
const KUBE_VERSIONS = ['1.30.0', '1.37.0'];

type Doc = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
} & Record<string, any>;

/** The node's own shutdown limit: src/main.ts exits this long after SIGTERM whatever is left. */
const SHUTDOWN_LIMIT_S =
  Number(
    /process\.exit\(1\), ([\d_]+)\)/
      .exec(readFileSync(path.join(root, 'src', 'main.ts'), 'utf8'))![1]!
      .replaceAll('_', ''),
  ) / 1000;

let helm: string;
let kubeconform: string;
let schemas: string;

function helmTemplate(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(helm, ['template', 'rel', chart, '--namespace', 'clinic', ...args], {
    encoding: 'utf8',
    maxBuffer: 32 * 1024 * 1024,
  });
}

/** Renders the chart with these extra `helm template` arguments; every document parsed. */
function render(args: string[] = []): { text: string; docs: Doc[] } {
  const r = helmTemplate(args);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const docs = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);
  return { text: r.stdout, docs };
}

/** Rendering refused: the message helm prints. */
function refusal(args: string[]): string {
  const r = helmTemplate(args);
  expect(r.status).not.toBe(0);
  return r.stderr;
}

/** kubeconform -strict against one Kubernetes release's schemas; the per-resource results. */
function validate(manifests: string, version: string, skip: string[] = []) {
  const r = spawnSync(
    kubeconform,
    [
      '-strict',
      '-output',
      'json',
      '-verbose',
      '-summary',
      '-kubernetes-version',
      version,
      '-schema-location',
      `${schemas}/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
      ...(skip.length ? ['-skip', skip.join(',')] : []),
      '-',
    ],
    { input: manifests, encoding: 'utf8' },
  );
  const out = JSON.parse(r.stdout) as {
    resources: { kind: string; name: string; status: string; msg: string }[];
    summary: { valid: number; invalid: number; errors: number; skipped: number };
  };
  return { status: r.status, ...out };
}

const byKind = (docs: Doc[], kind: string) => docs.filter((d) => d.kind === kind);
const podLabels = (d: Doc) => d.spec.template.metadata.labels as Record<string, string>;
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);
const container = (d: Doc) => d.spec.template.spec.containers[0];
const envOf = (d: Doc) => Object.fromEntries(container(d).env.map((e: any) => [e.name, e.value ?? e.valueFrom]));

/**
 * The Helm chart under deploy/helm/consult (decision 850): rendered with `helm template` and validated
 * with kubeconform -strict against the Kubernetes API schemas of the oldest and newest supported
 * releases (decision 851), with its default values and with a scaled-out variant; plus what the chart
 * must do for the service to survive a rolling upgrade and keep its secrets out of ConfigMaps.
 */
describe('Helm chart', () => {
  beforeAll(async () => {
    // Installed by `npm test`'s set-up; here on first use when the file runs alone (minutes, once).
    helm = await tools.ensureHelm();
    kubeconform = await tools.ensureKubeconform();
    schemas = tools.ensureKubernetesSchemas(KUBE_VERSIONS);
  }, 20 * 60_000);

  it.each([
    ['default values', [] as string[]],
    ['the scaled-out variant', ['-f', variantValues]],
  ])('passes helm lint --strict with %s', (_name, args) => {
    const r = spawnSync(helm, ['lint', '--strict', chart, ...args], { encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/\[(WARNING|ERROR)\]/);
    expect(r.status).toBe(0);
  });

  describe.each([
    ['default values', [] as string[], [] as string[]],
    ['the scaled-out variant (ci/variant-values.yaml)', ['-f', variantValues], ['ServiceMonitor']],
  ])('with %s', (_name, args, crds) => {
    it.each(KUBE_VERSIONS)('renders manifests that kubeconform -strict accepts for Kubernetes %s', (version) => {
      const { text, docs } = render(args);
      const r = validate(text, version, crds);
      const problems = r.resources.filter((x) => x.status !== 'statusValid' && x.status !== 'statusSkipped');
      expect(problems).toEqual([]);
      expect(r.status).toBe(0);
      // Every rendered document was checked against a schema, except the named CRDs (no schema here).
      expect(r.summary.valid).toBe(docs.length - docs.filter((d) => crds.includes(d.kind)).length);
      expect(r.summary.skipped).toBe(docs.filter((d) => crds.includes(d.kind)).length);
    });

    it('drains before a pod goes: preStop sleep, then a grace period longer than the shutdown limit', () => {
      for (const d of byKind(render(args).docs, 'Deployment')) {
        const c = container(d);
        const sleep = Number(c.lifecycle.preStop.exec.command[1]);
        expect(c.lifecycle.preStop.exec.command[0]).toBe('sleep');
        expect(sleep).toBeGreaterThan(0);
        // The node exits at the latest SHUTDOWN_LIMIT_S after SIGTERM; the kubelet kills at the grace period.
        expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(sleep + SHUTDOWN_LIMIT_S + 5);
        // A rolling update never takes a pod away before its replacement is available.
        expect(d.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
      }
    });

    it('probes HTTP nodes on /readyz (readiness) and /healthz (liveness); others on their listeners', () => {
      for (const d of byKind(render(args).docs, 'Deployment')) {
        const c = container(d);
        const roles = String(envOf(d).ROLES).split(',');
        if (roles.some((r) => ['http', 'hub', 'idp'].includes(r))) {
          expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
          expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
        } else {
          expect(c.readinessProbe.tcpSocket.port).toBe(roles.includes('telemetry') ? 'grpc' : 'metrics');
          expect(c.livenessProbe.tcpSocket.port).toBe('metrics');
        }
        expect(c.ports.map((p: any) => p.name)).toContain('metrics');
        expect(envOf(d).METRICS_HOST).toBe('0.0.0.0');
      }
    });

    it('gives every Deployment a PodDisruptionBudget that selects its pods and no other', () => {
      const { docs } = render(args);
      const deployments = byKind(docs, 'Deployment');
      const pdbs = byKind(docs, 'PodDisruptionBudget');
      expect(pdbs).toHaveLength(deployments.length);
      for (const pdb of pdbs) {
        const selected = deployments.filter((d) => selects(pdb.spec.selector.matchLabels, podLabels(d)));
        expect(selected.map((d) => d.metadata.name)).toEqual([pdb.metadata.name]);
        expect(selects(selected[0]!.spec.selector.matchLabels, podLabels(selected[0]!))).toBe(true);
      }
    });

    it('points each Service at pods that expose its target port', () => {
      const { docs } = render(args);
      for (const svc of byKind(docs, 'Service')) {
        const pods = byKind(docs, 'Deployment').filter((d) => selects(svc.spec.selector, podLabels(d)));
        expect(pods.length).toBeGreaterThan(0);
        for (const port of svc.spec.ports)
          expect(pods.some((d) => container(d).ports.some((p: any) => p.name === port.targetPort))).toBe(true);
      }
    });

    it('runs as the non-root user on a read-only root filesystem with writable /tmp and /data volumes', () => {
      const { docs } = render(args);
      for (const d of [...byKind(docs, 'Deployment'), ...byKind(docs, 'Job')]) {
        const pod = d.spec.template.spec;
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
        expect(pod.automountServiceAccountToken).toBe(false);
        expect(pod.containers[0].securityContext).toMatchObject({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        expect(pod.containers[0].volumeMounts.map((m: any) => m.mountPath)).toContain('/tmp');
      }
    });
  });

  it('keeps secrets out of the ConfigMap: given values land in the Secret only, a secret in config is refused', () => {
    const secret = 'provisioning-9f3c2a7d51e84b06';
    const redis = 'redis://consult:s3cr3t-redis-pass@redis:6379';
    const { text, docs } = render([
      '--set',
      `secrets.values.PROVISIONING_CODE=${secret}`,
      '--set',
      `secrets.values.REDIS_URL=${redis}`,
    ]);
    const configMap = byKind(docs, 'ConfigMap')[0]!;
    const secretKeys = Object.keys(byKind(docs, 'Secret')[0]!.stringData);
    expect(secretKeys.sort()).toEqual(['PROVISIONING_CODE', 'REDIS_URL']);
    for (const key of secretKeys) expect(Object.keys(configMap.data)).not.toContain(key);
    expect(JSON.stringify(configMap)).not.toContain(secret);
    // The values appear once each: in the Secret, nowhere else (no env value, no annotation).
    expect(text.split(secret)).toHaveLength(2);
    expect(text.split('s3cr3t-redis-pass')).toHaveLength(2);
    for (const d of byKind(docs, 'Deployment'))
      expect(container(d).envFrom).toContainEqual({ secretRef: { name: 'rel-consult-secrets' } });

    expect(refusal(['--set', `config.PROVISIONING_CODE=${secret}`])).toMatch(
      /config\.PROVISIONING_CODE is a secret: set it in secrets\.values or in secrets\.existingSecret/,
    );
    expect(refusal(['--set', 'config.KEY_ENCRYPTION_KEY=x'])).toMatch(/config\.KEY_ENCRYPTION_KEY is a secret/);
    expect(refusal(['--set', 'secrets.values.LOG_LEVEL=debug'])).toMatch(/secrets\.values\.LOG_LEVEL is not a secret/);
  });

  it('gives each pod an environment the service accepts in production, and one it refuses without the secrets', () => {
    const secrets = {
      MONGODB_URI: 'mongodb://consult:pw@mongo-0.mongo:27017/?replicaSet=rs0',
      REDIS_URL: 'redis://consult:pw@redis:6379',
      PROVISIONING_CODE: 'provisioning-code-of-this-test',
      OIDC_CLIENT_SECRET: 'client-secret-of-this-test',
      KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      VCS_EMBEDDED_SECRET: 'vcs-secret-of-this-test',
      // The chart binds metrics to 0.0.0.0, which production accepts only with a scrape token (decision 1032).
      METRICS_TOKEN: 'metrics-token-of-this-test',
    };
    const podEnv = (docs: Doc[], d: Doc) => {
      const fromEnv = Object.fromEntries(
        d.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value ?? `${d.metadata.name}-7d9f-x2k`]),
      );
      const secret = byKind(docs, 'Secret')[0]?.stringData ?? {};
      return { ...byKind(docs, 'ConfigMap')[0]!.data, ...secret, ...fromEnv } as Record<string, string>;
    };
    const withSecrets = render(Object.entries(secrets).flatMap(([k, v]) => ['--set', `secrets.values.${k}=${v}`])).docs;
    for (const d of [...byKind(withSecrets, 'Deployment'), ...byKind(withSecrets, 'Job')]) {
      const env = podEnv(withSecrets, d);
      const config = loadConfig(env);
      expect(config.env).toBe('production');
      expect(config.roles.join(',')).toBe(env.ROLES);
      if (d.kind === 'Deployment') expect(config.metrics.host).toBe('0.0.0.0');
    }
    const without = render().docs;
    const service = byKind(without, 'Deployment')[0]!;
    let refused: unknown;
    try {
      loadConfig(podEnv(without, service));
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    for (const name of ['PROVISIONING_CODE', 'OIDC_CLIENT_SECRET', 'REDIS_URL', 'KEY_ENCRYPTION_KEY'])
      expect((refused as Error).message).toContain(name);
  });

  it('uses an existing Secret by name and creates none', () => {
    const { docs } = render(['-f', variantValues]);
    expect(byKind(docs, 'Secret')).toEqual([]);
    for (const d of [...byKind(docs, 'Deployment'), ...byKind(docs, 'Job')])
      expect(d.spec.template.spec.containers[0].envFrom).toContainEqual({
        secretRef: { name: 'consult-prod-secrets' },
      });
    const monitor = byKind(docs, 'ServiceMonitor')[0]!;
    expect(monitor.spec.endpoints[0].authorization.credentials).toEqual({
      name: 'consult-prod-secrets',
      key: 'METRICS_TOKEN',
    });
  });

  it('sets the roles per kind of node and scales on CPU, hub connections and extra metrics', () => {
    const { docs } = render(['-f', variantValues]);
    const roles = Object.fromEntries(byKind(docs, 'Deployment').map((d) => [d.metadata.name, envOf(d).ROLES]));
    expect(roles).toEqual({
      'rel-consult-service': 'http,hub',
      'rel-consult-worker': 'workers,telemetry',
      'rel-consult-actor': 'actors',
    });
    const hpas = Object.fromEntries(byKind(docs, 'HorizontalPodAutoscaler').map((h) => [h.metadata.name, h.spec]));
    for (const [name, spec] of Object.entries(hpas)) {
      expect(spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      // An autoscaled Deployment leaves its replica count to the HPA.
      expect(byKind(docs, 'Deployment').find((d) => d.metadata.name === name)!.spec.replicas).toBeUndefined();
    }
    expect(hpas['rel-consult-service'].metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      {
        type: 'Pods',
        pods: { metric: { name: 'hub_connected_sockets' }, target: { type: 'AverageValue', averageValue: '4000' } },
      },
    ]);
    expect(hpas['rel-consult-worker'].metrics.map((m: any) => m.type)).toEqual(['Resource', 'External']);
    // The connections metric is the gauge the hub exports (renaming it would leave the HPA blind).
    expect(readFileSync(path.join(root, 'src', 'hub', 'hub.server.ts'), 'utf8')).toContain(
      `metrics.gauge('${hpas['rel-consult-service'].metrics[1].pods.metric.name}'`,
    );
    // Telemetry over mutual TLS on the worker nodes, the ingest's Service selecting them.
    const worker = byKind(docs, 'Deployment').find((d) => d.metadata.name === 'rel-consult-worker')!;
    expect(envOf(worker)).toMatchObject({
      GRPC_TLS_CERT_FILE: '/etc/consult/telemetry-tls/tls.crt',
      GRPC_TLS_CA_FILE: '/etc/consult/telemetry-tls/ca.crt',
      GRPC_TLS_CLIENT_AUTH: 'true',
      NODE_OPTIONS: '--optimize-for-size',
    });
    const telemetry = byKind(docs, 'Service').find((s) => s.metadata.name === 'rel-consult-telemetry')!;
    expect(selects(telemetry.spec.selector, podLabels(worker))).toBe(true);
  });

  it('migrates tenants in a hook Job before an upgrade rolls the nodes', () => {
    const job = byKind(render().docs, 'Job')[0]!;
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('post-install,pre-upgrade');
    expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'dist/cli/tenant.cli.js', 'migrate-all']);
  });

  it('refuses values that would drop calls or start nothing useful', () => {
    expect(refusal(['--set', 'serviceNodes.terminationGracePeriodSeconds=30'])).toMatch(
      /serviceNodes\.terminationGracePeriodSeconds \(30\) must be at least preStopSleepSeconds \+ 35/,
    );
    expect(refusal(['--set', 'workerNodes.roles={workers,jobs}'])).toMatch(
      /workerNodes\/roles\/1': value must be one of 'http', 'hub', 'actors', 'workers', 'telemetry', 'idp'/,
    );
    // values.schema.json: a misspelt key is an error, not a silently ignored value.
    expect(refusal(['--set', 'serviceNode.replicaCount=3'])).toMatch(/additional properties 'serviceNode' not allowed/);
    expect(refusal(['--set', 'config.ROLES=http'])).toMatch(/config\.ROLES is set by the chart/);
  });

  it('maps every setting of the service: README names each, and the chart names no unknown one', () => {
    const known = Object.keys(EnvSchema.shape);
    const readme = readFileSync(path.join(chart, 'README.md'), 'utf8');
    expect(known.filter((k) => !readme.includes(`\`${k}\``))).toEqual([]);
    const values = parseYaml(readFileSync(path.join(chart, 'values.yaml'), 'utf8'));
    const named = [...Object.keys(values.config), ...Object.keys(values.secrets.values)];
    expect(named.filter((k) => !known.includes(k))).toEqual([]);
  });
});
