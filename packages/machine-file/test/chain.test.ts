import {
  AsyncSettingError,
  InvalidArgumentError,
  InvalidMachineIdError,
  MachineIdProviderError,
  type NamedMachineIdProvider,
  NoMachineIdHereError,
} from '@ids/engine';
import {
  MachineIdDoesNotFitError,
  MetadataRefusedError,
  NoUniqueLocalAddressError,
  StoreUnavailableError,
} from '@ids/machine-ip';
import { closedLoopbackEndpoint, serverForSuite, startImdsTestServer } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import {
  AutoMachineIdError,
  autoMachineId,
  autoSteps,
  explicitStep,
  HeldFileInUseError,
  HostClaim,
} from '../src/index.js';
import {
  type AutoRun,
  createGenerator,
  fakeTable,
  generator,
  readRecordAt,
  runAuto,
  runAutoAsync,
  tempDir,
  thrown,
} from './helpers.js';

// The default 1 s metadata bound is for the real service; the loopback fake, in a process that a
// loaded machine starves, may answer later. The tests of the bound itself set their own.
const LOOPBACK_MS = '30000';

const NO_PRIVATE = () => ({ eth0: [{ address: '192.0.2.10', family: 'IPv4', internal: false }] });
const IPV6_ONLY = () => ({
  eth0: [
    { address: 'fd00::2', family: 'IPv6', internal: false },
    { address: 'fe80::fc:ff:fe00:1', family: 'IPv6', internal: false },
  ],
});
const IN_K8S = { KUBERNETES_SERVICE_HOST: '10.96.0.1' };

function options(dir: string, extra: AutoRun = {}): AutoRun {
  return {
    env: {},
    interfaces: NO_PRIVATE,
    ...extra,
    claim: { dir, processes: fakeTable(100), releaseOnExit: false, ...extra.claim },
  };
}
const names = (trail: readonly { step: string; outcome: string }[]) =>
  trail.map((s) => `${s.step}:${s.outcome}`);

describe('the chain is a list of named steps', () => {
  it('a caller adds a step without touching the chain; failed without stop goes on, skipped says why', () => {
    const mine: NamedMachineIdProvider[] = [
      {
        name: 'redis',
        title: 'Redis lease',
        provider: () => {
          throw new NoMachineIdHereError('IDS_REDIS_URL is not set', 'skipped');
        },
      },
      {
        name: 'etcd',
        title: 'etcd lease',
        provider: () => {
          throw new NoMachineIdHereError('etcd at 127.0.0.1:1 refused the connection', 'failed');
        },
      },
      {
        name: 'fixed',
        title: 'fixed',
        provider: ({ bits, note }) => {
          note?.(`the width, ${bits}`);
          return bits;
        },
      },
    ];
    const o = options(tempDir(), { bits: 12 });
    const result = runAuto({ ...o, steps: [...mine, ...autoSteps(o)] });
    expect(result).toMatchObject({ id: 12, machineId: 12, step: 'fixed', title: 'fixed' });
    expect(result.explain()).toBe(
      '1. Redis lease: skipped - IDS_REDIS_URL is not set\n2. etcd lease: failed - etcd at 127.0.0.1:1 refused the connection\n3. fixed: used - the width, 12',
    );
  });

  it('a throw, noted or not, ends the chain with the cause and the trail so far', () => {
    const cause = new Error('lease store said no');
    for (const step of [
      {
        name: 'stop',
        title: 'stopper',
        provider: ({ note }) => {
          note?.('tried, refused');
          throw cause;
        },
      },
      {
        name: 'stop',
        title: 'stopper',
        provider: () => {
          throw cause;
        },
      },
    ] satisfies NamedMachineIdProvider[]) {
      const o = options(tempDir());
      const error = thrown<AutoMachineIdError>(() => runAuto({ ...o, steps: [step, ...autoSteps(o)] }));
      expect(error).toBeInstanceOf(AutoMachineIdError);
      expect(error.cause).toBe(cause);
      expect(error.trail).toHaveLength(1);
      expect(error.message).toMatch(/^no machine ID: .*\n1\. stopper: failed - /);
    }
  });

  it('a step that gives an ID outside the field is refused, and its claim released', () => {
    let released = 0;
    const claim = { machineId: 300, release: () => void released++ };
    const step: NamedMachineIdProvider = {
      name: 'wide',
      title: 'wide',
      provider: ({ note }) => {
        note?.('too wide');
        return claim;
      },
    };
    const error = thrown<AutoMachineIdError>(() => runAuto(options(tempDir(), { steps: [step], bits: 8 })));
    expect(error.cause).toBeInstanceOf(InvalidMachineIdError);
    expect(error.message).toMatch(/the wide step gave 300 \(number\); expected an integer from 0 to 255/);
    expect(released).toBe(1);
    expect(error.trail).toEqual([
      { step: 'wide', outcome: 'failed', detail: expect.stringMatching(/gave 300/) },
    ]);
  });

  it('no step giving one is an AutoMachineIdError with the whole trail', () => {
    const error = thrown<AutoMachineIdError>(() =>
      runAuto(options(tempDir(), { steps: [explicitStep({ name: '--machine-id', value: undefined })] })),
    );
    expect(error.message).toBe(
      'no machine ID: no step of the chain gave one\n1. --machine-id: skipped - not given',
    );
  });

  it('an explicit step for a flag: its value, or a usage error never skipped over', () => {
    const o = options(tempDir(), { env: { IDS_MACHINE_ID: '9' } });
    const steps = [explicitStep({ name: '--machine-id', value: '7' }), ...autoSteps(o)];
    expect(runAuto({ ...o, steps }).trail).toEqual([
      { step: '--machine-id', outcome: 'used', detail: 'machine ID 7 from --machine-id' },
    ]);
    const bad = [explicitStep({ name: '--machine-id', value: '7x' }), ...autoSteps(o)];
    const error = thrown<AutoMachineIdError>(() => runAuto({ ...o, steps: bad }));
    expect(error.cause).toBeInstanceOf(InvalidMachineIdError);
    expect(error.message).toMatch(/--machine-id: expected an integer from 0 to 65535, received "7x"/);
  });

  it('opt-in names are checked against the chain: an unknown one is InvalidArgumentError', () => {
    expect(() => runAuto(options(tempDir(), { env: { IDS_AUTO_OPT_IN: 'ec2,ipv7' } }))).toThrow(
      InvalidArgumentError,
    );
    expect(() => runAuto(options(tempDir(), { env: { IDS_AUTO_OPT_IN: 'ipv7' } }))).toThrow(
      /IDS_AUTO_OPT_IN: expected names of opt-in steps \(ec2, ipv6-ula\), received "ipv7"/,
    );
  });

  it('an asynchronous step: refused by the synchronous constructor, run through create()', async () => {
    const slow: NamedMachineIdProvider = { name: 'slow', title: 'slow', provider: async () => 5 };
    const error = thrown(() =>
      generator({ machineId: autoMachineId(options(tempDir(), { steps: [slow] })) }),
    );
    expect(error).toBeInstanceOf(AsyncSettingError);
    expect((await runAutoAsync(options(tempDir(), { steps: [slow] }))).id).toBe(5);
    const sonyflake = await createGenerator({
      machineId: autoMachineId(options(tempDir(), { steps: [slow] })),
    });
    expect(sonyflake.machine).toBe(5);
    await sonyflake.close();
  });

  it('the provider form takes the width from the layout, and reports the trail', async () => {
    const seen: string[] = [];
    const provider = autoMachineId({
      ...options(tempDir()),
      env: { IDS_MACHINE_ID: '300' },
      onChosen: (a) => seen.push(a.explain()),
    });
    const sonyflake = generator({ machineId: provider });
    expect(sonyflake.machine).toBe(300);
    expect(seen).toEqual(['1. explicit ID: used - machine ID 300 from IDS_MACHINE_ID']);
    await sonyflake.close();
    // With 8 machine bits, 300 does not fit: the chain's own error, as the provider's cause.
    const narrow = createGenerator({ machineId: provider, machineBits: 8 });
    await expect(narrow).rejects.toThrow(MachineIdProviderError);
    await expect(narrow.catch((e: Error) => Promise.reject(e.cause))).rejects.toThrow(
      /IDS_MACHINE_ID: expected an integer from 0 to 255/,
    );
  });
});

describe('the Kubernetes ordinal step', () => {
  it('in a StatefulSet pod, the ordinal plus IDS_ORDINAL_OFFSET, held as a host claim of that ID', () => {
    const dir = tempDir();
    const result = runAuto(options(dir, { env: { ...IN_K8S, HOSTNAME: 'ids-2', IDS_ORDINAL_OFFSET: '10' } }));
    expect(result).toMatchObject({ step: 'kubernetes-ordinal', id: 12 });
    expect(result.machineId).toBeInstanceOf(HostClaim);
    expect(result.explain()).toMatch(
      /^1\. explicit ID: skipped .*\n2\. Kubernetes ordinal: used - machine ID 12: ordinal 2 from the pod name ids-2, plus offset 10; held on this host: claimed /,
    );
    expect(readRecordAt(dir, '12.claim')).toMatchObject({ state: 'held', pid: 100 });
    // A second process of the same pod derives the same ID and fails instead of sharing it.
    const error = thrown<AutoMachineIdError>(() =>
      runAuto(
        options(dir, {
          env: { ...IN_K8S, HOSTNAME: 'ids-2', IDS_ORDINAL_OFFSET: '10' },
          claim: { processes: fakeTable(101, { 100: '1000' }) },
        }),
      ),
    );
    expect(error.cause).toBeInstanceOf(HeldFileInUseError);
  });

  it('outside Kubernetes, or in a Deployment pod, it is skipped and the chain goes on', () => {
    const outside = runAuto(options(tempDir(), { env: { HOSTNAME: 'ids-2' } }));
    expect(outside.trail[1]).toEqual({
      step: 'kubernetes-ordinal',
      outcome: 'skipped',
      detail: 'not in Kubernetes: KUBERNETES_SERVICE_HOST is not set',
    });
    expect(outside.step).toBe('host-claim');
    const deployment = runAuto(options(tempDir(), { env: { ...IN_K8S, HOSTNAME: 'ids-7c9d8f6b4-24657' } }));
    expect(deployment.step).toBe('host-claim');
    expect(deployment.trail[1]).toMatchObject({
      outcome: 'skipped',
      detail: expect.stringMatching(
        /ends in 24657, which can be the random 5-character suffix of a DaemonSet's, Deployment's or Job's pod: not taken as an ordinal/,
      ),
    });
  });

  it('a value the user set that is wrong stops the chain: IDS_POD_INDEX, IDS_ORDINAL_OFFSET, an ordinal that overflows', () => {
    const cases: [Record<string, string>, RegExp, unknown][] = [
      [{ HOSTNAME: 'ids-2', IDS_POD_INDEX: 'two' }, /IDS_POD_INDEX: expected the pod's ordinal/, undefined],
      [
        { HOSTNAME: 'ids-2', IDS_ORDINAL_OFFSET: '-3' },
        /IDS_ORDINAL_OFFSET: expected a decimal integer, received "-3"/,
        InvalidArgumentError,
      ],
      [
        { HOSTNAME: 'ids-65535', IDS_ORDINAL_OFFSET: '1' },
        /gives machine ID 65536, which needs 17 bits/,
        MachineIdDoesNotFitError,
      ],
    ];
    for (const [env, message, type] of cases) {
      const error = thrown<AutoMachineIdError>(() =>
        runAuto(options(tempDir(), { env: { ...IN_K8S, ...env } })),
      );
      expect(error).toBeInstanceOf(AutoMachineIdError);
      expect(error.message).toMatch(message);
      if (type) expect(error.cause).toBeInstanceOf(type);
      expect(error.trail.at(-1)).toMatchObject({ step: 'kubernetes-ordinal', outcome: 'failed' });
    }
  });

  it('the ordinalOffset option wins over IDS_ORDINAL_OFFSET, and is checked under its own name', () => {
    const env = { ...IN_K8S, HOSTNAME: 'ids-3', IDS_ORDINAL_OFFSET: '10' };
    expect(runAuto(options(tempDir(), { env, ordinalOffset: 20, guard: false })).id).toBe(23);
    const error = thrown<AutoMachineIdError>(() => runAuto(options(tempDir(), { env, ordinalOffset: -1 })));
    expect(error.cause).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toMatch(/ordinalOffset: expected an integer from 0 to 1073741823, received -1/);
  });

  it('guard: false gives the bare number', () => {
    expect(
      runAuto(options(tempDir(), { guard: false, env: { ...IN_K8S, HOSTNAME: 'ids-4' } })).machineId,
    ).toBe(4);
  });
});

describe('the opt-in steps', () => {
  const imds = serverForSuite(() => startImdsTestServer('10.0.9.33'));

  it('ec2: the instance address from a loopback IMDSv2 service, before the private IPv4 step', async () => {
    const result = await runAutoAsync(
      options(tempDir(), {
        env: {
          IDS_AUTO_OPT_IN: 'ec2',
          IDS_EC2_ENDPOINT: imds.server.endpoint,
          IDS_EC2_TIMEOUT_MS: LOOPBACK_MS,
        },
      }),
    );
    expect(result).toMatchObject({ step: 'ec2', id: 9 * 256 + 33 });
    expect(result.explain()).toMatch(
      new RegExp(
        `3\\. EC2 metadata: used - machine ID 2337 from 10\\.0\\.9\\.33, the instance's private IPv4 \\(IMDSv2 at ${imds.server.endpoint}; Go's rule\\); held on this host`,
      ),
    );
  });

  it('ec2 opted in but refused or unreachable: the chain stops, never falls back', async () => {
    imds.server.mode = 'wrong-token';
    const refused = await runAutoAsync(
      options(tempDir(), {
        env: {
          IDS_AUTO_OPT_IN: 'ec2',
          IDS_EC2_ENDPOINT: imds.server.endpoint,
          IDS_EC2_TIMEOUT_MS: LOOPBACK_MS,
        },
      }),
    ).catch((e: AutoMachineIdError) => e);
    imds.server.mode = 'ok';
    expect((refused as AutoMachineIdError).cause).toBeInstanceOf(MetadataRefusedError);
    expect(names((refused as AutoMachineIdError).trail)).toEqual([
      'explicit:skipped',
      'kubernetes-ordinal:skipped',
      'ec2:failed',
    ]);
    const off = await runAutoAsync(
      options(tempDir(), {
        optIn: ['ec2'],
        ec2: { endpoint: await closedLoopbackEndpoint(), timeoutMs: 500 },
      }),
    ).catch((e: AutoMachineIdError) => e);
    expect((off as AutoMachineIdError).cause).toBeInstanceOf(StoreUnavailableError);
  });

  it('ipv6-ula: on an IPv6-only host (fd00::2), when opted in; without it, the host claim', () => {
    const optedIn = runAuto(
      options(tempDir(), { interfaces: IPV6_ONLY, env: { IDS_AUTO_OPT_IN: 'ipv6-ula' } }),
    );
    expect(optedIn).toMatchObject({ step: 'ipv6-ula', id: 2 });
    expect(optedIn.explain()).toMatch(
      /5\. unique-local IPv6: used - machine ID 2 from fd00::2 \(its interface identifier\) on eth0: the only unique-local IPv6 address; held/,
    );
    expect(runAuto(options(tempDir(), { interfaces: IPV6_ONLY })).step).toBe('host-claim');
    const none = thrown<AutoMachineIdError>(() => runAuto(options(tempDir(), { optIn: ['ipv6-ula'] })));
    expect(none.cause).toBeInstanceOf(NoUniqueLocalAddressError);
  });
});
