// Bad options fail at once, when the provider or check is made, with an error naming the option.
import { IdsError, InvalidArgumentError, MachineIdProviderError, resolveMachineId } from '@ids/engine';
import { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { etcdCheckMachineId, etcdMachineId, LeaseBitsMismatchError } from '../src/index.js';
import { parseEndpoints } from '../src/options.js';
import { layoutWith } from './helpers.js';

function optionError(make: () => unknown): InvalidArgumentError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toBeInstanceOf(IdsError);
    const e = error as InvalidArgumentError;
    expect(e.code).toBe('ERR_IDS_INVALID_ARGUMENT');
    expect(e.name).toBe('InvalidArgumentError');
    return e;
  }
  throw new Error('expected an InvalidArgumentError, nothing was thrown');
}

describe('bad options: a typed error that says which option and what it received', () => {
  it.each([
    ['not a URL', 'no url here', /expected URLs like http:\/\/127\.0\.0\.1:2379, received "no url here"/],
    ['host:port without a scheme', 'etcd:2379', /expected http:\/\/host:port.*received "etcd:2379"/],
    ['no scheme', '127.0.0.1:2379', /received "127\.0\.0\.1:2379"/],
    ['no port', 'http://127.0.0.1', /with the port; no path.*received "http:\/\/127\.0\.0\.1"/],
    ['a path', 'http://127.0.0.1:2379/v3', /no path/],
    ['a fragment', 'http://127.0.0.1:2379#x', /no path, query, fragment or credentials/],
    ['a user in the URL', 'http://root@127.0.0.1:2379', /pass those as auth/],
    ['a password alone in the URL', 'http://:secret@127.0.0.1:2379', /credentials/],
    ['another scheme', 'grpc://127.0.0.1:2379', /expected http:\/\/host:port or https/],
    ['empty', '', /received ""/],
  ])('endpoints: %s', (_, endpoints, message) => {
    const e = optionError(() => etcdMachineId({ endpoints }));
    expect(e.option).toBe('endpoints');
    expect(e.message).toMatch(message);
    expect(optionError(() => etcdCheckMachineId({ endpoints })).option).toBe('endpoints');
  });

  it('endpoints: a list with a bad entry, mixed schemes, no entries, a non-string', () => {
    expect(optionError(() => etcdMachineId({ endpoints: ['http://a:1', 'b'] })).message).toMatch(
      /received "b"/,
    );
    expect(optionError(() => etcdMachineId({ endpoints: ['http://a:1', 'https://b:2'] })).message).toMatch(
      /all http or all https/,
    );
    expect(optionError(() => etcdMachineId({ endpoints: [] })).message).toMatch(/at least one URL/);
    expect(optionError(() => etcdMachineId({ endpoints: 2379 as never })).message).toMatch(
      /received 2379 \(number\)/,
    );
  });

  it('ETCD_ENDPOINTS is used when no endpoints are given, and named when it is malformed', () => {
    expect(
      parseEndpoints(undefined, { ETCD_ENDPOINTS: 'http://10.0.0.1:2379, http://10.0.0.2:2379' }),
    ).toEqual(['http://10.0.0.1:2379', 'http://10.0.0.2:2379']);
    expect(parseEndpoints(undefined, {})).toEqual(['http://127.0.0.1:2379']);
    const e = optionError(() => parseEndpoints(undefined, { ETCD_ENDPOINTS: 'localhost' }));
    expect(e.option).toBe('ETCD_ENDPOINTS');
    expect(e.message).toMatch(/received "localhost"/);
  });

  it.each([
    ['empty', ''],
    ['relative', 'ids/machine-id'],
    ['trailing slash', '/ids/'],
    ['the root alone', '/'],
    ['an empty segment', '/ids//machine-id'],
    ['a dot segment', '/ids/../x'],
    ['a space', '/ids/machine id'],
    ['not a string', 42],
  ])('prefix: %s', (_, prefix) => {
    const e = optionError(() => etcdMachineId({ prefix: prefix as string }));
    expect(e.option).toBe('prefix');
    expect(e.message).toMatch(/expected an absolute key path like \/ids\/machine-id/);
    expect(e.message).toContain('received');
  });

  it('TTL under the fencing margin, and TTLs etcd cannot take', () => {
    const under = optionError(() => etcdMachineId({ ttlSeconds: 1, fenceMarginMs: 1500 }));
    expect(under.option).toBe('ttlSeconds');
    expect(under.message).toMatch(/TTL of 1 s \(1000 ms\) must be above fenceMarginMs \(1500 ms\)/);
    expect(optionError(() => etcdCheckMachineId({ ttlSeconds: 2, fenceMarginMs: 2000 })).option).toBe(
      'ttlSeconds',
    );
    expect(optionError(() => etcdMachineId({ ttlSeconds: 0 })).message).toMatch(
      /integer from 1 to 86,400, received 0/,
    );
    expect(optionError(() => etcdMachineId({ ttlSeconds: 1.5 })).option).toBe('ttlSeconds');
    expect(optionError(() => etcdMachineId({ fenceMarginMs: -1 })).option).toBe('fenceMarginMs');
    expect(optionError(() => etcdMachineId({ fenceMarginMs: Number.NaN })).option).toBe('fenceMarginMs');
  });

  it('a keepalive interval that leaves no room before the deadline', () => {
    const e = optionError(() =>
      etcdMachineId({ ttlSeconds: 2, fenceMarginMs: 500, keepaliveIntervalMs: 1500 }),
    );
    expect(e.option).toBe('keepaliveIntervalMs');
    expect(e.message).toMatch(/less than TTL minus fenceMarginMs \(1500 ms\)/);
    expect(optionError(() => etcdMachineId({ keepaliveIntervalMs: 0 })).option).toBe('keepaliveIntervalMs');
  });

  it('timeoutMs, bits, probes, recordIntervalMs, client', () => {
    expect(optionError(() => etcdMachineId({ timeoutMs: 0 })).option).toBe('timeoutMs');
    expect(optionError(() => etcdMachineId({ bits: 31 })).option).toBe('bits');
    expect(optionError(() => etcdMachineId({ probes: -1 })).option).toBe('probes');
    expect(optionError(() => etcdMachineId({ recordIntervalMs: 0 })).option).toBe('recordIntervalMs');
    expect(optionError(() => etcdMachineId({ client: {} as never })).option).toBe('client');
    const client = new Etcd3({ hosts: 'http://127.0.0.1:1' });
    try {
      const both = optionError(() => etcdMachineId({ client, endpoints: 'http://127.0.0.1:2379' }));
      expect(both.message).toMatch(/either a client or the options to make one/);
    } finally {
      client.close();
    }
    expect(optionError(() => etcdMachineId('x' as never)).option).toBe('options');
  });

  it('bits that do not match the generator: refused before any connection', async () => {
    const provider = etcdMachineId({ endpoints: 'http://127.0.0.1:1', bits: 10 });
    const attempt = resolveMachineId(layoutWith(16), provider);
    await expect(attempt).rejects.toBeInstanceOf(MachineIdProviderError);
    const cause = await attempt.catch((e: Error) => e.cause);
    expect(cause).toBeInstanceOf(LeaseBitsMismatchError);
    expect((cause as Error).message).toMatch(
      /set up for a 10-bit machine field \(bits: 10\), but the generator's field has 16 bits/,
    );
    expect((cause as LeaseBitsMismatchError).code).toBe('ERR_IDS_LEASE_BITS_MISMATCH');
  });
});
