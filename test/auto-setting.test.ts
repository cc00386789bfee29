// `machineId: 'auto'` in Sonyflake.create runs @ids/machine-file's auto chain (an optional peer
// of @ids/sonyflake, loaded only then). It is never the default: a host claim is unique on this
// host only, so landing on one is announced.
import { privateIPv4 } from '@ids/machine-ip';
import { Sonyflake } from '@ids/sonyflake';
import { startImdsTestServer } from '@ids/test-services';
import { afterEach, expect, it, vi } from 'vitest';
import { tempDir } from './helpers.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

it("machineId: 'auto' takes IDS_MACHINE_ID first", async () => {
  vi.stubEnv('IDS_MACHINE_ID', '9');
  const sonyflake = await Sonyflake.create({ machineId: 'auto' });
  expect(sonyflake.machine).toBe(9);
  await sonyflake.close();
});

it("machineId: 'auto' without IDS_MACHINE_ID holds a host claim (announced) or the private-IPv4 ID", async () => {
  vi.stubEnv('IDS_MACHINE_ID', undefined);
  vi.stubEnv('IDS_CLAIM_DIR', tempDir('auto-setting'));
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    const sonyflake = await Sonyflake.create({ machineId: 'auto' });
    await new Promise((resolve) => setImmediate(resolve));
    const hostClaim = warnings.find((w) => (w as Error & { code?: string }).code === 'IDS_HOST_CLAIM');
    // This machine has no private IPv4, so the chain ends in a host claim; on one that has, the
    // private-IPv4 ID is held instead, without the warning.
    let hasPrivate = true;
    try {
      privateIPv4();
    } catch {
      hasPrivate = false;
    }
    expect(hostClaim !== undefined, 'a host claim is announced exactly when there is no private IPv4').toBe(
      !hasPrivate,
    );
    if (hostClaim) {
      expect(hostClaim.message).toBe(
        `machine ID ${sonyflake.machine} is a host claim: unique on this host only. For IDs unique across hosts, give each host its own ID (IDS_MACHINE_ID=N), or claim one in a store (set IDS_MACHINE_ID_REDIS_URL, IDS_REDIS_URL, IDS_ETCD_ENDPOINTS, IDS_ZOOKEEPER_CONNECT)`,
      );
    }
    await sonyflake.close();
  } finally {
    process.off('warning', onWarning);
  }
});

it("machineId: 'auto' runs the opted-in EC2 step from create(): the instance address of a loopback IMDSv2", async () => {
  const imds = await startImdsTestServer('10.0.9.33');
  try {
    vi.stubEnv('IDS_MACHINE_ID', undefined);
    vi.stubEnv('KUBERNETES_SERVICE_HOST', undefined);
    vi.stubEnv('IDS_AUTO_OPT_IN', 'ec2');
    vi.stubEnv('IDS_EC2_ENDPOINT', imds.endpoint);
    // The default 1 s bound is for the real service; a loopback fake on a loaded machine may answer later.
    vi.stubEnv('IDS_EC2_TIMEOUT_MS', '30000');
    vi.stubEnv('IDS_CLAIM_DIR', tempDir('auto-setting'));
    // create() used to run the chain synchronously, which refuses the asynchronous EC2 step.
    const sonyflake = await Sonyflake.create({ machineId: 'auto' });
    expect(sonyflake.machine).toBe(9 * 256 + 33);
    expect(imds.requests.map((r) => r.split(' ').slice(0, 2).join(' '))).toEqual([
      'PUT /latest/api/token',
      'GET /latest/meta-data/local-ipv4',
    ]);
    await sonyflake.close();
  } finally {
    await imds.close();
  }
});
