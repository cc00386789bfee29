// The manifest, checked without a cluster: parse it, build each pod's environment as the kubelet
// would (its literal values, the downward-API fields for pod ids-N, HOSTNAME and the
// KUBERNETES_SERVICE_* variables every pod gets), and start the ID service it names
// (examples/id-server, `node index.mjs`) with that environment, as separate processes. Only two
// values are replaced, both for the test's sake: HOST becomes 127.0.0.1 (nothing here listens
// beyond loopback) and PORT 0 (a free port), and the emptyDir of claims is a temporary directory.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
interface Container {
  name: string;
  workingDir: string;
  command: string[];
  ports: { name: string; containerPort: number }[];
  env: EnvVar[];
  volumeMounts: { name: string; mountPath: string }[];
  readinessProbe: { httpGet: { path: string; port: string } };
}
interface Manifest {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

const repo = resolve(__dirname, '..', '..', '..');
const docs = parseAllDocuments(readFileSync(join(__dirname, '..', 'statefulset.yaml'), 'utf8')).map((d) => {
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
    spec: { containers: Container[]; volumes: { name: string; emptyDir?: object }[] };
  };
};
const container = spec.template.spec.containers[0]!;

/** The value the downward API gives a fieldRef for pod `<set>-<ordinal>`; anything else fails the test. */
function field(path: string, ordinal: number): string {
  if (path === 'metadata.name') return `${set.metadata.name}-${ordinal}`;
  if (path === "metadata.labels['apps.kubernetes.io/pod-index']") return String(ordinal);
  throw new Error(`the test does not know the downward-API field ${path}`);
}

/** Pod ids-N's environment: the manifest's, what every pod gets, and the test's two loopback settings. */
function podEnv(
  ordinal: number,
  claimDir: string,
  patch: Record<string, string> = {},
): Record<string, string> {
  const fromManifest = Object.fromEntries(
    container.env.map((v) => [v.name, v.value ?? field(v.valueFrom!.fieldRef!.fieldPath, ordinal)]),
  );
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([n, v]) => v !== undefined && !n.startsWith('IDS_') && !n.startsWith('KUBERNETES_'),
    ),
  ) as Record<string, string>;
  return {
    ...inherited,
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
afterAll(() => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
});

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
 * Starts the container's command in its working directory. Resolves once it has printed how it
 * chose its machine ID (the chain's `used` line), or once it has exited.
 */
function startPod(env: Record<string, string>): Promise<Pod> {
  const cwd = join(repo, container.workingDir.replace(/^\/app\//, ''));
  const [command, ...args] = container.command;
  expect(command).toBe('node');
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let text = '';
  const output = () => text;
  return new Promise((done) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on (\S+) with machine ID (\d+)\n[\s\S]*: used - .*\n/.exec(text);
      if (match) done({ child, output, url: match[1]!, machine: Number(match[2]) });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', () => done({ child, output }));
  });
}

/** SIGTERM, once the pod answers (so its signal handlers are in place); resolves with its exit code. */
async function stop(pod: Pod): Promise<number | null> {
  expect((await fetch(`${pod.url}/health`)).status).toBe(200);
  return new Promise((done) => {
    pod.child.on('exit', (code) => done(code));
    pod.child.kill('SIGTERM');
  });
}

describe('the StatefulSet manifest', () => {
  it('is consistent: headless Service, selector, named port, probe, claim directory on an emptyDir', () => {
    expect(service.spec.clusterIP).toBe('None');
    expect(spec.serviceName).toBe(service.metadata.name);
    expect(spec.selector.matchLabels).toEqual(spec.template.metadata.labels);
    expect(service.spec.selector).toEqual(spec.template.metadata.labels);
    const port = container.ports.find((p) => p.name === 'http')!;
    expect(String(port.containerPort)).toBe(container.env.find((v) => v.name === 'PORT')?.value);
    expect(container.readinessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    const claimDir = container.env.find((v) => v.name === 'IDS_CLAIM_DIR')?.value;
    const mount = container.volumeMounts.find((m) => m.mountPath === claimDir)!;
    expect(spec.template.spec.volumes.find((v) => v.name === mount.name)?.emptyDir).toEqual({});
    expect(existsSync(join(repo, container.workingDir.replace(/^\/app\//, ''), container.command[1]!))).toBe(
      true,
    );
  });

  it('each pod of the set serves with its ordinal as machine ID, all at once, and stops on SIGTERM', async () => {
    const pods = await Promise.all(
      Array.from({ length: spec.replicas }, (_, n) =>
        startPod(podEnv(n, mkdtempSync(join(tmpdir(), `ids-pod-${n}-`)))),
      ),
    );
    for (const [n, pod] of pods.entries()) {
      expect(pod.machine, pod.output()).toBe(n);
      expect(pod.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(pod.output()).toMatch(
        new RegExp(
          `Kubernetes ordinal: used - machine ID ${n}: ordinal ${n} from the IDS_POD_INDEX=${n}, plus offset 0; held on this host`,
        ),
      );
      const health = (await (await fetch(`${pod.url}/health`)).json()) as { machine: number };
      expect(health).toEqual({ status: 'ok', machine: n });
      const { id } = (await (await fetch(`${pod.url}/id`)).json()) as { id: string };
      expect(Number(BigInt(id) & 0xffffn)).toBe(n); // Sonyflake: the low 16 bits are the machine ID
    }
    expect(await Promise.all(pods.map((p) => stop(p)))).toEqual(pods.map(() => 0));
  });

  it('a second set with IDS_ORDINAL_OFFSET=100 shares the ID space without overlap', async () => {
    const pod = await startPod(
      podEnv(1, mkdtempSync(join(tmpdir(), 'ids-pod-')), { IDS_ORDINAL_OFFSET: '100' }),
    );
    expect(pod.machine, pod.output()).toBe(101);
    expect(await stop(pod)).toBe(0);
  });

  it('a second process in the same pod cannot take the pod ID: it fails to start, naming the holder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-pod-2-'));
    const first = await startPod(podEnv(2, dir));
    expect(first.machine).toBe(2);
    const second = await startPod(podEnv(2, dir));
    expect(second.machine).toBeUndefined();
    expect(second.child.exitCode).toBe(1);
    expect(second.output()).toMatch(
      /id-server could not start: no machine ID: machine ID 2 is not free .*held by pid \d+, which is running/,
    );
    expect(await stop(first)).toBe(0);
  });

  it('a pod index that disagrees with the pod name stops the start rather than picking one', async () => {
    const pod = await startPod({ ...podEnv(1, mkdtempSync(join(tmpdir(), 'ids-pod-'))), IDS_POD_INDEX: '4' });
    expect(pod.child.exitCode).toBe(1);
    expect(pod.output()).toMatch(
      /the pod index 4 \(IDS_POD_INDEX\) and the pod name ids-1 \(ordinal 1\) disagree/,
    );
  });
});
