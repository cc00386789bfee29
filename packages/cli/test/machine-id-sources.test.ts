// The machine-ID sources of a deployment, set as a user sets them: IDS_* variables and the
// variables Kubernetes gives a pod, through the built `ids` executable (a separate process) and
// in-process where the host's interfaces must be injected. The EC2 metadata service is a
// loopback server speaking IMDSv2; nothing here sends traffic off loopback.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AutoMachineIdError } from '@ids/machine-file';
import { StoreUnavailableError } from '@ids/machine-zookeeper';
import {
  closedLoopbackEndpoint,
  freePort,
  hasRedis,
  hasZookeeper,
  serverForSuite,
  startImdsTestServer,
  startRedis,
  startZookeeper,
} from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { chooseMachineId } from '../src/machine-id.js';
import { CLAIM_DIR, ERROR_LINE, ids as idsInProcess } from './helpers.js';

// The default 1 s metadata bound is for the real service; the loopback fake, in a process that a
// loaded machine starves, may answer later. The tests of the bound itself set their own.
const LOOPBACK_MS = '30000';

const bin = join(__dirname, '..', 'bin', 'ids.js');
const userEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !name.startsWith('IDS_') && name !== 'KUBERNETES_SERVICE_HOST',
  ),
);

// Asynchronous, so the loopback metadata service in this process can answer meanwhile.
async function ids(args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], {
      env: { ...userEnv, IDS_CLAIM_DIR: CLAIM_DIR, ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The variables of a Kubernetes pod named `name` (its HOSTNAME), with `more` set by the user. */
function pod(name: string, more: Record<string, string> = {}): Record<string, string> {
  return { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', HOSTNAME: name, ...more };
}

describe('ids machine-id in a Kubernetes StatefulSet', () => {
  it('pod ids-3 with IDS_ORDINAL_OFFSET=100 gets 103, and --explain shows each step', async () => {
    const result = await ids(['machine-id', '--explain'], pod('ids-3', { IDS_ORDINAL_OFFSET: '100' }));
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(
      'machine ID 103 for the sonyflake layout (16 machine bits), from Kubernetes ordinal',
    );
    expect(lines[3]).toMatch(
      /^ {4}3\. Kubernetes ordinal: used - machine ID 103: ordinal 3 from the pod name ids-3, plus offset 100; held on this host: claimed /,
    );
    expect(lines).toHaveLength(5);
  });

  it('the pod-index label through the downward API (IDS_POD_INDEX) wins over an odd hostname', async () => {
    const result = await ids(
      ['machine-id', '--json', '-l', 'twitter'],
      pod('custom', { IDS_POD_INDEX: '7' }),
    );
    expect(JSON.parse(result.stdout)).toMatchObject({ machineId: 7, step: 'kubernetes-ordinal', bits: 10 });
  });

  it('an ordinal that does not fit the layout stops, naming it (exit 1), rather than falling back', async () => {
    const result = await ids(['generate', '-l', 'twitter'], pod('ids-1024'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(ERROR_LINE);
    expect(result.stderr).toMatch(
      /ERR_IDS_AUTO_MACHINE_ID: no machine ID: the ordinal 1024 \(pod name ids-1024\) plus offset 0 gives machine ID 1024, which needs 11 bits/,
    );
  });

  it('a Deployment pod has no ordinal: the step says so and the chain goes on', async () => {
    const result = await ids(['machine-id', '--json'], pod('ids-5d8f7c9b4-x7k2p'));
    const json = JSON.parse(result.stdout);
    expect(json.step).not.toBe('kubernetes-ordinal');
    expect(json.trail[2]).toMatchObject({
      step: 'kubernetes-ordinal',
      outcome: 'skipped',
      detail: expect.stringMatching(/has no StatefulSet ordinal/),
    });
  });

  it('a DaemonSet pod whose random suffix is all digits (node-agent-24657) is not read as ordinal 24657: --explain says why', async () => {
    const result = await ids(['machine-id', '--explain'], pod('node-agent-24657'));
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/from Kubernetes ordinal/);
    expect(result.stdout).toMatch(
      /\n {4}3\. Kubernetes ordinal: skipped - the pod name "node-agent-24657" ends in 24657, which can be the random 5-character suffix of a DaemonSet's, Deployment's or Job's pod: not taken as an ordinal\. In a StatefulSet, name it \(IDS_STATEFULSET=node-agent\) or set IDS_POD_INDEX/,
    );
  });

  it('naming the StatefulSet (IDS_STATEFULSET) takes that ordinal; a pod of another set stops the choice', async () => {
    const named = await ids(
      ['machine-id', '--explain'],
      pod('node-agent-24657', { IDS_STATEFULSET: 'node-agent' }),
    );
    expect(named.code).toBe(0);
    expect(named.stdout).toMatch(
      /^machine ID 24657 for the sonyflake layout .* from Kubernetes ordinal\n[\s\S]*ordinal 24657 from the pod name node-agent-24657 of StatefulSet node-agent, plus offset 0/,
    );
    const other = await ids(['machine-id'], pod('web-3', { IDS_STATEFULSET: 'node-agent' }));
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/is not a pod of the StatefulSet node-agent/);
  });

  it('a malformed IDS_ORDINAL_OFFSET or IDS_AUTO_OPT_IN is a mistake in what was typed: exit 2', async () => {
    const offset = await ids(['machine-id'], pod('ids-1', { IDS_ORDINAL_OFFSET: 'ten' }));
    expect(offset.code).toBe(2);
    expect(offset.stderr).toMatch(/IDS_ORDINAL_OFFSET: expected a decimal integer, received "ten"/);
    const optIn = await ids(['machine-id'], { IDS_AUTO_OPT_IN: 'gcp' });
    expect(optIn.code).toBe(2);
    expect(optIn.stderr).toMatch(
      /IDS_AUTO_OPT_IN: expected names of opt-in steps \(ec2, ipv6-ula\), received "gcp"/,
    );
  });
});

describe('ids machine-id with EC2 metadata (opt-in), against a loopback IMDSv2 service', () => {
  const imds = serverForSuite(() => startImdsTestServer('172.31.4.9'));

  it('IDS_AUTO_OPT_IN=ec2 and IDS_EC2_ENDPOINT: the instance address gives the ID, token first', async () => {
    imds.server.requests.length = 0;
    const result = await ids(['machine-id', '--explain'], {
      IDS_AUTO_OPT_IN: 'ec2',
      IDS_EC2_ENDPOINT: imds.server.endpoint,
      IDS_EC2_TIMEOUT_MS: LOOPBACK_MS,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^machine ID 1033 for the sonyflake layout \(16 machine bits\), from EC2 metadata\n/,
    );
    expect(result.stdout).toMatch(
      /4\. EC2 metadata: used - machine ID 1033 from 172\.31\.4\.9, the instance's private IPv4 \(IMDSv2/,
    );
    expect(imds.server.requests.map((r) => r.split(' ').slice(0, 2).join(' '))).toEqual([
      'PUT /latest/api/token',
      'GET /latest/meta-data/local-ipv4',
    ]);
  });

  it('a refused token, or no service (a closed loopback port): exit 1 with the typed cause, no fallback', async () => {
    imds.server.mode = 'refuse-token';
    const refused = await ids(['machine-id'], {
      IDS_AUTO_OPT_IN: 'ec2',
      IDS_EC2_ENDPOINT: imds.server.endpoint,
      IDS_EC2_TIMEOUT_MS: LOOPBACK_MS,
    });
    imds.server.mode = 'ok';
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the IMDSv2 token request was refused with HTTP 403/);
    const off = await ids(['machine-id'], {
      IDS_AUTO_OPT_IN: 'ec2',
      IDS_EC2_ENDPOINT: await closedLoopbackEndpoint(),
      IDS_EC2_TIMEOUT_MS: '2000',
    });
    expect(off.code).toBe(1);
    expect(off.stderr).toMatch(/ECONNREFUSED \(not on EC2, or the metadata service is off\)/);
  });
});

describe('ids machine-id on an IPv6-only host (interfaces injected)', () => {
  const ipv6Only = () => ({
    lo: [{ address: '::1', family: 'IPv6', internal: true }],
    eth0: [
      { address: 'fd00::2', family: 'IPv6', internal: false },
      { address: 'fe80::fc:ff:fe00:1', family: 'IPv6', internal: false },
    ],
  });

  it('with IDS_AUTO_OPT_IN=ipv6-ula, fd00::2 gives 2; without, the host claim', async () => {
    const opted = await idsInProcess(['machine-id', '--explain'], {
      interfaces: ipv6Only,
      env: { IDS_AUTO_OPT_IN: 'ipv6-ula' },
    });
    expect(opted.code).toBe(0);
    expect(opted.stdout).toMatch(
      /^machine ID 2 for the sonyflake layout \(16 machine bits\), from unique-local IPv6\n/,
    );
    expect(opted.stdout).toMatch(
      /6\. unique-local IPv6: used - machine ID 2 from fd00::2 \(its interface identifier\) on eth0/,
    );
    const plain = await idsInProcess(['machine-id', '--json'], { interfaces: ipv6Only });
    expect(JSON.parse(plain.stdout).step).toBe('host-claim');
  });

  it('a SLAAC address is refused when opted in (exit 1), not cut to its low bits', async () => {
    const slaac = () => ({
      eth0: [{ address: 'fd00::a1b2:c3ff:fed4:e5f6', family: 'IPv6', internal: false }],
    });
    const result = await idsInProcess(['machine-id'], {
      interfaces: slaac,
      env: { IDS_AUTO_OPT_IN: 'ipv6-ula' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/interface identifier 0xa1b2c3fffed4e5f6, which needs 64 bits/);
  });
});

describe.skipIf(!hasRedis())('ids machine-id with IDS_REDIS_URL', () => {
  const redis = serverForSuite(() => startRedis({ allowExternal: false }));

  it('the Redis step comes after the explicit ID and claims an ID in that Redis; --explain shows it', async () => {
    // A fresh Redis holds no recorded time, so the claim is used only after one lease TTL
    // (10 s by default): the rule for a Redis that may have forgotten a live holder's key.
    const result = await ids(['machine-id', '--explain'], { IDS_REDIS_URL: redis.server.url });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^machine ID \d+ for the sonyflake layout \(16 machine bits\), from Redis claim/,
    );
    expect(result.stdout).toMatch(
      / {4}2\. explicit ID: skipped - .*\n {4}3\. Redis claim: used - claimed machine ID \d+ in Redis at redis:\/\/127\.0\.0\.1:\d+/,
    );
  }, 30_000);

  it('a Redis that cannot be reached stops the chain: no host-derived ID beside a Redis fleet', async () => {
    const closed = await startRedis({ allowExternal: false });
    const url = closed.url;
    await closed.close();
    const result = await ids(['machine-id', '--explain'], { IDS_REDIS_URL: url });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/3\. Redis claim: failed - could not claim a machine ID in Redis at /);
    expect(result.stderr).not.toMatch(/host claim: used/);
  }, 30_000);

  it('an IDS_REDIS_URL whose database is not a number is a mistake in what was typed: exit 2', async () => {
    const result = await ids(['machine-id'], { IDS_REDIS_URL: 'redis://127.0.0.1:1/abc' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /ERR_IDS_INVALID_ARGUMENT: IDS_REDIS_URL: the database of .* received "abc"/,
    );
  });
});

describe.skipIf(!hasZookeeper())('ids machine-id with a ZooKeeper', () => {
  const zk = serverForSuite(() => startZookeeper({ allowExternal: false }));

  it('--zookeeper: the ZooKeeper step comes after the explicit ID and claims an ID there; --explain shows it', async () => {
    const result = await ids(['machine-id', '--zookeeper', zk.server.connect, '--explain'], {});
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^machine ID \d+ for the sonyflake layout \(16 machine bits\), from ZooKeeper claim/,
    );
    expect(result.stdout).toMatch(
      / {4}2\. explicit ID: skipped - .*\n {4}3\. ZooKeeper claim: used - claimed machine ID \d+ in ZooKeeper at 127\.0\.0\.1:\d+ \(key \/ids\/machine-id\/claims\/\d+\)/,
    );
  }, 30_000);

  it('IDS_ZOOKEEPER_CONNECT puts the same step in the chain', async () => {
    const result = await ids(['machine-id', '--explain'], { IDS_ZOOKEEPER_CONNECT: zk.server.connect });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/3\. ZooKeeper claim: used - claimed machine ID \d+ in ZooKeeper at /);
  }, 30_000);

  it('a ZooKeeper port nothing listens on stops the chain with the typed error: no host-derived ID', async () => {
    const port = await freePort();
    const result = await ids(['machine-id', '--zookeeper', `127.0.0.1:${port}`, '--explain'], {});
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/ERR_IDS_AUTO_MACHINE_ID/);
    expect(result.stderr).toMatch(
      new RegExp(
        `3\\. ZooKeeper claim: failed - could not claim a machine ID in ZooKeeper at 127\\.0\\.0\\.1:${port} \\(--zookeeper\\): zookeeper: no ZooKeeper session`,
      ),
    );
    expect(result.stderr).not.toMatch(/host claim: used/);
    // The same chain in process: its cause is the lease family's class, naming the store.
    const error = await chooseMachineId({ bits: 16, zookeeper: `127.0.0.1:${port}`, env: {} }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AutoMachineIdError);
    expect((error as AutoMachineIdError).cause).toBeInstanceOf(StoreUnavailableError);
    expect(((error as AutoMachineIdError).cause as StoreUnavailableError).store).toBe('zookeeper');
  }, 30_000);

  it('a --zookeeper that is not host:port is a mistake in the command line (exit 2)', async () => {
    const result = await ids(['machine-id', '--zookeeper', 'zk1'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--zookeeper: expected host:port/);
  });

  it('an IDS_ZOOKEEPER_CONNECT that is not host:port is a mistake in what was typed (exit 2)', async () => {
    const result = await ids(['machine-id'], { IDS_ZOOKEEPER_CONNECT: 'zk1' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/ERR_IDS_INVALID_ARGUMENT: IDS_ZOOKEEPER_CONNECT: expected host:port/);
  });
});
