import { InvalidArgumentError } from '@ids/engine';
import { describe, expect, it } from 'vitest';
import {
  kubernetesOrdinalMachineId,
  MachineIdDoesNotFitError,
  NoPodOrdinalError,
  podOrdinal,
} from '../src/index.js';

describe('kubernetesOrdinalMachineId', () => {
  it('takes the ordinal from the pod name, plus the offset', () => {
    expect(kubernetesOrdinalMachineId({ hostname: 'ids-2' })({ bits: 16 })).toBe(2);
    expect(kubernetesOrdinalMachineId({ hostname: 'web-api-0', offset: 100 })({ bits: 16 })).toBe(100);
    expect(kubernetesOrdinalMachineId({ env: { HOSTNAME: 'ids-17' }, offset: 3 })({ bits: 10 })).toBe(20);
    expect(podOrdinal({ env: { HOSTNAME: 'ids-17' } })).toEqual({ ordinal: 17, from: 'pod name ids-17' });
  });

  it('reads HOSTNAME when the provider is called, not when it is made', () => {
    const env: Record<string, string> = {};
    const provider = kubernetesOrdinalMachineId({ env });
    env.HOSTNAME = 'ids-4';
    expect(provider({ bits: 16 })).toBe(4);
  });

  it('the pod-index label (IDS_POD_INDEX) wins, and must agree with the name', () => {
    expect(podOrdinal({ env: { HOSTNAME: 'custom-host', IDS_POD_INDEX: '5' } })).toEqual({
      ordinal: 5,
      from: 'IDS_POD_INDEX=5',
    });
    expect(kubernetesOrdinalMachineId({ podIndex: 7 })({ bits: 16 })).toBe(7);
    expect(() => podOrdinal({ env: { HOSTNAME: 'ids-2', IDS_POD_INDEX: '3' } })).toThrow(
      /the pod index 3 \(IDS_POD_INDEX\) and the pod name ids-2 \(ordinal 2\) disagree/,
    );
    // A name that gives no ordinal cannot disagree: the index decides.
    expect(podOrdinal({ env: { HOSTNAME: 'node-agent-24657', IDS_POD_INDEX: '4' } }).ordinal).toBe(4);
    for (const bad of ['-1', '01', 'two', '1.5', ' 2']) {
      expect(() => podOrdinal({ env: { IDS_POD_INDEX: bad } })).toThrow(NoPodOrdinalError);
    }
  });

  it.each([
    ['web', /has no StatefulSet ordinal \(expected <set>-<ordinal>, like ids-2\)/],
    ['web-', /has no StatefulSet ordinal/],
    ['web-007', /has no StatefulSet ordinal/],
    ['ids-2a', /has no StatefulSet ordinal/],
    ['web-7c9d8f6b4-x7k2p', /has no StatefulSet ordinal/],
    ['node-agent-x7k2p', /has no StatefulSet ordinal/],
    // Pods of a Deployment (<name>-<hash>-<suffix>), a DaemonSet or a Job (<name>-<suffix>) whose
    // random suffix happens to be all digits are not taken for an ordinal.
    [
      'web-7c9d8f6b4-24657',
      /"web-7c9d8f6b4-24657" ends in 24657, which can be the random 5-character suffix/,
    ],
    [
      'node-agent-24657',
      /ends in 24657, .* DaemonSet's.* name it \(IDS_STATEFULSET=node-agent\) or set IDS_POD_INDEX/,
    ],
    ['backup-29046780-99999', /ends in 99999, which can be the random/],
  ])('refuses the pod name %j', (hostname, message) => {
    const provider = kubernetesOrdinalMachineId({ hostname });
    expect(() => provider({ bits: 16 })).toThrow(NoPodOrdinalError);
    expect(() => provider({ bits: 16 })).toThrow(message);
  });

  it('takes a 5-digit ordinal made of the suffix alphabet only from a pod of the named StatefulSet', () => {
    // Digits outside the alphabet (0 1 3), or another length, cannot be a random suffix.
    expect(podOrdinal({ hostname: 'ids-10234' })).toEqual({ ordinal: 10234, from: 'pod name ids-10234' });
    expect(podOrdinal({ hostname: 'ids-2465' }).ordinal).toBe(2465);
    expect(podOrdinal({ hostname: 'ids-246579' }).ordinal).toBe(246579);
    expect(podOrdinal({ hostname: 'node-agent-24657', statefulSet: 'node-agent' })).toEqual({
      ordinal: 24657,
      from: 'pod name node-agent-24657 of StatefulSet node-agent',
    });
    expect(
      kubernetesOrdinalMachineId({ env: { HOSTNAME: 'node-agent-24657', IDS_STATEFULSET: 'node-agent' } })({
        bits: 16,
      }),
    ).toBe(24657);
    expect(podOrdinal({ env: { HOSTNAME: 'ids-3', IDS_STATEFULSET: 'ids' } }).ordinal).toBe(3);
  });

  it('with the StatefulSet named, refuses a pod name not of that set', () => {
    for (const hostname of ['web-3', 'node-agent-x7k2p', 'node-agent-', 'node-agent-07', 'node-agent-1-2']) {
      expect(() => podOrdinal({ hostname, statefulSet: 'node-agent' })).toThrow(
        /is not a pod of the StatefulSet node-agent \(expected node-agent-<ordinal>, like node-agent-2\)/,
      );
    }
    expect(() => podOrdinal({ env: { HOSTNAME: 'web-3', IDS_STATEFULSET: 'node-agent' } })).toThrow(
      NoPodOrdinalError,
    );
  });

  it('refuses a malformed StatefulSet name, as option at once and from IDS_STATEFULSET when read', () => {
    for (const bad of ['Web', '-web', 'web-', 'a b', 3]) {
      expect(() => kubernetesOrdinalMachineId({ statefulSet: bad as string })).toThrow(InvalidArgumentError);
    }
    expect(() => podOrdinal({ env: { HOSTNAME: 'web-3', IDS_STATEFULSET: 'Web' } })).toThrow(
      /IDS_STATEFULSET: expected a StatefulSet's name \(lower-case letters, digits, '-' and '.'\), received "Web"/,
    );
  });

  it('refuses no name at all, naming where it looked', () => {
    expect(() => podOrdinal({ env: {} })).toThrow(/HOSTNAME is not set and no pod index was given/);
  });

  it('refuses an ordinal plus offset that does not fit the machine field', () => {
    expect(kubernetesOrdinalMachineId({ hostname: 'ids-1023' })({ bits: 10 })).toBe(1023);
    expect(() => kubernetesOrdinalMachineId({ hostname: 'ids-1024' })({ bits: 10 })).toThrow(
      MachineIdDoesNotFitError,
    );
    expect(() => kubernetesOrdinalMachineId({ hostname: 'ids-24', offset: 1000 })({ bits: 10 })).toThrow(
      /the ordinal 24 \(pod name ids-24\) plus offset 1000 gives machine ID 1024, which needs 11 bits; the layout's machine field has 10/,
    );
  });

  it('refuses a bad offset at once', () => {
    for (const offset of [-1, 1.5, 2 ** 30, Number.NaN, '3']) {
      expect(() => kubernetesOrdinalMachineId({ offset: offset as number })).toThrow(InvalidArgumentError);
    }
  });
});
