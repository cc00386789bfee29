// The manifest, checked without a cluster: parse it, build each pod's environment as the kubelet
// would (its literal values, the downward-API fields for pod ids-N, the Secret's token, HOSTNAME
// and the KUBERNETES_SERVICE_* variables every pod gets), and start the command it names
// (`ids-server`, the bin of @ids/server, found on PATH as in the image) with that environment, as
// separate processes. Only two values are replaced, both for the test's sake: HOST becomes
// 127.0.0.1 (nothing here listens beyond loopback) and PORT 0 (a free port), and the emptyDir of
// claims is a temporary directory.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet: { path: string; port: string };
}
interface Container {
  name: string;
  command: string[];
  ports: { name: string; containerPort: number }[];
  env: EnvVar[];
  volumeMounts: { name: string; mountPath: string }[];
  readinessProbe: Probe;
  livenessProbe: Probe;
  lifecycle: { preStop: { exec: { command: string[] } } };
  resources: Record<'requests' | 'limits', { cpu: string; memory: string }>;
}
interface Manifest {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

// Processes start under a shared, loaded machine: starting three servers at once can take
// seconds, which says nothing about the manifest.
const SLOW = 60_000;

const example = resolve(__dirname, '..');
const docs = parseAllDocuments(readFileSync(join(example, 'statefulset.yaml'), 'utf8')).map((d) => {
  expect(d.errors).toEqual([]);
  return d.toJS() as Manifest;
});
const service = docs.find((d) => d.kind === 'Service')!;
const set = docs.find((d) => d.kind === 'StatefulSet')!;
const spec = set.spec as {
  serviceName: string;
  replicas: number;
  selector: { matchLabels: Record<string, string> };
  template: {
    metadata: { labels: Record<string, string> };
    spec: {
      terminationGracePeriodSeconds: number;
      containers: Container[];
      volumes: { name: string; emptyDir?: object }[];
    };
  };
};
const container = spec.template.spec.containers[0]!;
const literal = (name: string) => container.env.find((v) => v.name === name)?.value;

/** The Secret the operator creates (`kubectl create secret generic ids-auth ...`), here made up. */
const secrets: Record<string, Record<string, string>> = {
  'ids-auth': { token: randomBytes(24).toString('hex') },
};
const token = secrets['ids-auth']!.token!;
const auth = { authorization: `Bearer ${token}` };

/** The value the kubelet gives a valueFrom for pod `<set>-<ordinal>`; anything else fails the test. */
function valueFrom(from: NonNullable<EnvVar['valueFrom']>, ordinal: number): string {
  if (from.secretKeyRef) {
    const value = secrets[from.secretKeyRef.name]?.[from.secretKeyRef.key];
    if (value === undefined) throw new Error(`the test has no Secret ${JSON.stringify(from.secretKeyRef)}`);
    return value;
  }
  const path = from.fieldRef?.fieldPath;
  if (path === 'metadata.name') return `${set.metadata.name}-${ordinal}`;
  if (path === "metadata.labels['apps.kubernetes.io/pod-index']") return String(ordinal);
  throw new Error(`the test does not know the downward-API field ${path}`);
}

/**
 * Pod ids-N's environment: the manifest's, what every pod gets, and the test's two loopback
 * settings. PATH finds `ids-server` as on the image: the example's node_modules/.bin, where pnpm
 * links the bin (a committed launcher, so the link is there on a fresh clone too).
 */
function podEnv(
  ordinal: number,
  claimDir: string,
  patch: Record<string, string> = {},
): Record<string, string> {
  const fromManifest = Object.fromEntries(
    container.env.map((v) => [v.name, v.value ?? valueFrom(v.valueFrom!, ordinal)]),
  );
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([n, v]) => v !== undefined && !n.startsWith('IDS_') && !n.startsWith('KUBERNETES_'),
    ),
  ) as Record<string, string>;
  return {
    ...inherited,
    PATH: [join(example, 'node_modules', '.bin'), dirname(process.execPath), process.env.PATH].join(
      delimiter,
    ),
    ...fromManifest,
    HOSTNAME: `${set.metadata.name}-${ordinal}`,
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
    KUBERNETES_SERVICE_PORT: '443',
    HOST: '127.0.0.1',
    PORT: '0',
    IDS_CLAIM_DIR: claimDir,
    ...patch,
  };
}

const started: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A pod's own claim directory `<prefix>…`, deleted after this file's tests. */
function podDir(prefix: string): string {
  dirs.push(mkdtempSync(join(tmpdir(), prefix)));
  return dirs.at(-1)!;
}

interface Pod {
  readonly child: ChildProcess;
  /** Everything it printed so far. */
  readonly output: () => string;
  /** Set once it listens. */
  readonly url?: string;
  /** The machine ID it reported. */
  readonly machine?: number;
}

/**
 * Starts the container's command, as is, with the pod's environment. Resolves once it has printed
 * where it listens and how it chose its machine ID (the `slot 0:` line), or once it has exited.
 */
function startPod(env: Record<string, string>): Promise<Pod> {
  const [command, ...args] = container.command;
  const child = spawn(command!, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let text = '';
  const output = () => text;
  return new Promise((done) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on (\S+) with machine ID (\d+)\n {2}slot 0: .*\n/.exec(text);
      if (match) done({ child, output, url: match[1]!, machine: Number(match[2]) });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    // 'close', not 'exit': what the pod printed last may still be in the pipe at 'exit'.
    child.on('close', () => done({ child, output }));
  });
}

/** Fetches a path of the pod as JSON (with the token), expecting `status`. */
async function json<T>(pod: Pod, path: string, status = 200): Promise<T> {
  const response = await fetch(`${pod.url}${path}`, { headers: auth });
  expect(response.status, path).toBe(status);
  return (await response.json()) as T;
}

/**
 * SIGTERM, once the pod is ready (so its signal handlers are in place): readiness turns 503 while
 * IDs are still served (the drain, IDS_DRAIN_MS); resolves with its exit code.
 */
async function stop(pod: Pod): Promise<number | null> {
  const readiness = `${pod.url}${container.readinessProbe.httpGet.path}`;
  expect((await fetch(readiness)).status).toBe(200);
  const exited = new Promise<number | null>((done) => pod.child.on('exit', (code) => done(code)));
  pod.child.kill('SIGTERM');
  let status = 200;
  while (status === 200) status = (await fetch(readiness)).status;
  expect(status).toBe(503);
  expect((await fetch(`${pod.url}/id`, { headers: auth })).status).toBe(200);
  return exited;
}

describe('the StatefulSet manifest', { timeout: 60_000 }, () => {
  it('asks for resources within its limits, and lets a disruption take one pod at a time', () => {
    const cpu = (value: string) => (value.endsWith('m') ? Number(value.slice(0, -1)) / 1000 : Number(value));
    const mib = (value: string) => Number(/^(\d+)Mi$/.exec(value)?.[1]);
    const { requests, limits } = container.resources;
    expect(cpu(requests.cpu)).toBeGreaterThan(0);
    expect(cpu(requests.cpu)).toBeLessThanOrEqual(cpu(limits.cpu));
    expect(mib(requests.memory)).toBeGreaterThan(0);
    expect(mib(requests.memory)).toBeLessThanOrEqual(mib(limits.memory));
    const budget = docs.find((d) => d.kind === 'PodDisruptionBudget')!;
    expect(budget.spec.selector).toEqual({ matchLabels: spec.template.metadata.labels });
    expect(budget.spec.maxUnavailable).toBe(1);
    expect(spec.replicas).toBeGreaterThan(1);
  });

  it('is consistent: headless Service, selector, named port, probes, claim directory on an emptyDir, the command', () => {
    expect(service.spec.clusterIP).toBe('None');
    expect(spec.serviceName).toBe(service.metadata.name);
    expect(spec.selector.matchLabels).toEqual(spec.template.metadata.labels);
    expect(service.spec.selector).toEqual(spec.template.metadata.labels);
    const port = container.ports.find((p) => p.name === 'http')!;
    expect(String(port.containerPort)).toBe(literal('PORT'));
    expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
    const claimDir = literal('IDS_CLAIM_DIR');
    const mount = container.volumeMounts.find((m) => m.mountPath === claimDir)!;
    expect(spec.template.spec.volumes.find((v) => v.name === mount.name)?.emptyDir).toEqual({});
    // The kubelet runs preStop, then sends SIGTERM; SIGKILL comes once the grace period, counted
    // from preStop's start, is over. The sleep, the drain and the shutdown bound must all fit.
    const [sleep, seconds] = container.lifecycle.preStop.exec.command;
    expect(sleep).toBe('sleep');
    expect(Number(seconds)).toBeGreaterThan(0);
    expect(spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(
      Number(seconds) * 1000 + Number(literal('IDS_DRAIN_MS')) + Number(literal('IDS_SHUTDOWN_TIMEOUT_MS')),
    );
    expect(literal('IDS_MACHINE_ID_SOURCE')).toBe('auto');
    // The command is @ids/server's bin, as `npm i -g @ids/server` puts it on PATH.
    const serverDir = join(example, 'node_modules', '@ids', 'server');
    const { bin } = JSON.parse(readFileSync(join(serverDir, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    expect(container.command).toEqual(['ids-server']);
    expect(existsSync(join(serverDir, bin['ids-server']!))).toBe(true);
  });

  it(
    'each pod of the set serves with its ordinal as machine ID, all at once, and stops on SIGTERM',
    async () => {
      const pods = await Promise.all(
        Array.from({ length: spec.replicas }, (_, n) => startPod(podEnv(n, podDir(`ids-pod-${n}-`)))),
      );
      for (const [n, pod] of pods.entries()) {
        expect(pod.machine, pod.output()).toBe(n);
        expect(pod.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(pod.output()).toMatch(
          new RegExp(
            `slot 0: machine ID ${n}: ordinal ${n} from the IDS_POD_INDEX=${n}, plus offset 0; held on this host`,
          ),
        );
        const live = await fetch(`${pod.url}${container.livenessProbe.httpGet.path}`);
        expect(live.status).toBe(200);
        const ready = await fetch(`${pod.url}${container.readinessProbe.httpGet.path}`);
        expect(ready.status).toBe(200);
        expect(((await ready.json()) as { machines: { machineId: number }[] }).machines).toMatchObject([
          { machineId: n },
        ]);
        // The Secret's token is enforced on the ID routes, loopback or not.
        expect((await fetch(`${pod.url}/id`)).status).toBe(401);
        const { id } = await json<{ id: string }>(pod, '/id');
        expect(Number(BigInt(id) & 0xffffn)).toBe(n); // Sonyflake: the low 16 bits are the machine ID
        expect((await json<{ machine: number }>(pod, `/ids/${id}`)).machine).toBe(n);
      }
      expect(await Promise.all(pods.map((p) => stop(p)))).toEqual(pods.map(() => 0));
    },
    SLOW,
  );

  it(
    'a second set with IDS_ORDINAL_OFFSET=100 shares the ID space without overlap',
    async () => {
      const pod = await startPod(podEnv(1, podDir('ids-pod-'), { IDS_ORDINAL_OFFSET: '100' }));
      expect(pod.machine, pod.output()).toBe(101);
      const { id } = await json<{ id: string }>(pod, '/id');
      expect((await json<{ machine: number }>(pod, `/ids/${id}`)).machine).toBe(101);
      expect(await stop(pod)).toBe(0);
    },
    SLOW,
  );

  it(
    'a second process in the same pod cannot take the pod ID: it fails to start, naming the holder',
    async () => {
      const dir = podDir('ids-pod-2-');
      const first = await startPod(podEnv(2, dir));
      expect(first.machine, first.output()).toBe(2);
      const second = await startPod(podEnv(2, dir));
      expect(second.machine).toBeUndefined();
      expect(second.child.exitCode).toBe(1);
      expect(second.output()).toMatch(
        /ids-server: ERR_IDS_AUTO_MACHINE_ID: no machine ID: machine ID 2 is not free .*held by pid \d+, which is running/,
      );
      expect(await stop(first)).toBe(0);
    },
    SLOW,
  );

  it(
    'a pod index that disagrees with the pod name stops the start rather than picking one',
    async () => {
      const pod = await startPod({
        ...podEnv(1, podDir('ids-pod-')),
        IDS_POD_INDEX: '4',
      });
      expect(pod.child.exitCode).toBe(1);
      expect(pod.output()).toMatch(
        /the pod index 4 \(IDS_POD_INDEX\) and the pod name ids-1 \(ordinal 1\) disagree/,
      );
    },
    SLOW,
  );
});
