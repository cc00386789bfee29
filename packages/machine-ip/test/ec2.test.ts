import { InvalidArgumentError } from '@ids/engine';
import { closedLoopbackEndpoint, serverForSuite, startImdsTestServer } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import {
  ec2MachineId,
  ec2PrivateIPv4,
  MachineIdDoesNotFitError,
  MetadataAnswerError,
  MetadataRefusedError,
  StoreUnavailableError,
} from '../src/index.js';

// No cloud is reachable here, and no test may send traffic off loopback: every call below is
// given the endpoint of a loopback server speaking IMDSv2 (./imds.ts), or a closed loopback port.
const imds = serverForSuite(startImdsTestServer);

const reset = () => {
  imds.server.mode = 'ok';
  imds.server.address = '10.0.3.7';
  imds.server.requests.length = 0;
};

describe('ec2MachineId (IMDSv2, against a loopback metadata service)', () => {
  it('PUTs for a token, GETs local-ipv4 with it, and gives the low 16 bits', async () => {
    reset();
    expect(await ec2MachineId({ endpoint: imds.server.endpoint })({ bits: 16 })).toBe(3 * 256 + 7);
    expect(imds.server.requests).toHaveLength(2);
    expect(imds.server.requests[0]).toBe('PUT /latest/api/token');
    expect(imds.server.requests[1]).toMatch(/^GET \/latest\/meta-data\/local-ipv4 AQAEA\w+==$/);
  });

  it('many concurrent callers each get the same answer, each with its own token', async () => {
    reset();
    const ids = await Promise.all(
      Array.from({ length: 20 }, () => ec2MachineId({ endpoint: imds.server.endpoint })({ bits: 16 })),
    );
    expect(new Set(ids)).toEqual(new Set([775]));
    const tokens = imds.server.requests.filter((r) => r.startsWith('GET')).map((r) => r.split(' ')[2]);
    expect(new Set(tokens).size).toBe(20);
  });

  it('a refused token request or a refused token is MetadataRefusedError, never a fallback', async () => {
    reset();
    imds.server.mode = 'refuse-token';
    await expect(ec2PrivateIPv4({ endpoint: imds.server.endpoint })).rejects.toThrow(MetadataRefusedError);
    await expect(ec2PrivateIPv4({ endpoint: imds.server.endpoint })).rejects.toThrow(
      /the IMDSv2 token request was refused with HTTP 403/,
    );
    imds.server.mode = 'wrong-token';
    await expect(ec2PrivateIPv4({ endpoint: imds.server.endpoint })).rejects.toThrow(
      /local-ipv4: refused with HTTP 401 \(the token was not accepted\)/,
    );
  });

  it('the loopback service itself refuses a GET without a token (IMDSv2 only)', async () => {
    reset();
    const res = await fetch(`${imds.server.endpoint}/latest/meta-data/local-ipv4`);
    expect(res.status).toBe(401);
    const wrong = await fetch(`${imds.server.endpoint}/latest/meta-data/local-ipv4`, {
      headers: { 'X-aws-ec2-metadata-token': 'forged' },
    });
    expect(wrong.status).toBe(401);
  });

  it.each([
    ['garbage-token', /expected an IMDSv2 token, received "<html>captive portal<\/html>"/],
    ['garbage-address', /expected a private IPv4 address, received "ip-10-0-3-7\.ec2\.internal"/],
    ['public-address', /expected a private IPv4 address, received "203\.0\.113\.50"/],
    ['huge', /the answer is longer than 1024 bytes/],
  ] as const)(
    'an answer of the wrong shape (%s) is MetadataAnswerError naming what came',
    async (mode, message) => {
      reset();
      imds.server.mode = mode;
      const error = await ec2PrivateIPv4({ endpoint: imds.server.endpoint }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MetadataAnswerError);
      expect((error as Error).message).toMatch(message);
    },
  );

  it('an address that does not fit the machine field is refused', async () => {
    reset();
    await expect(
      Promise.resolve(ec2MachineId({ endpoint: imds.server.endpoint })({ bits: 8 })),
    ).rejects.toThrow(MachineIdDoesNotFitError);
  });

  it('a service that never answers: StoreUnavailableError (store ec2-metadata) once timeoutMs has passed', async () => {
    reset();
    imds.server.mode = 'stall';
    const error = await ec2PrivateIPv4({ endpoint: imds.server.endpoint, timeoutMs: 50 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toMatchObject({
      store: 'ec2-metadata',
      feature: 'machine-id',
      code: 'ERR_IDS_STORE_UNAVAILABLE',
    });
    expect((error as Error).message).toMatch(
      /^ec2-metadata: PUT .*\/latest\/api\/token: no answer within 50 ms/,
    );
  });

  it('off EC2 (nothing listening): StoreUnavailableError naming the refusal', async () => {
    const endpoint = await closedLoopbackEndpoint();
    const error = await Promise.resolve(ec2MachineId({ endpoint })({ bits: 16 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).store).toBe('ec2-metadata');
    expect((error as Error).message).toMatch(/ECONNREFUSED \(not on EC2, or the metadata service is off\)/);
  });

  it('refuses bad settings at once, before any request', () => {
    for (const timeoutMs of [0, -1, 1.5, 60_001, Number.NaN]) {
      expect(() => ec2MachineId({ timeoutMs })).toThrow(InvalidArgumentError);
    }
    for (const endpoint of ['169.254.169.254', 'https://127.0.0.1', 'http://127.0.0.1/latest', 'nope']) {
      expect(() => ec2MachineId({ endpoint })).toThrow(/endpoint: expected a URL http:\/\/host\[:port\]/);
    }
  });
});
