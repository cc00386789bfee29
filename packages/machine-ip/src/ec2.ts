// Go's helper for EC2 (awsutil.AmazonEC2MachineID): the instance's private IPv4 from the
// instance metadata service, low 16 bits. Spoken in IMDSv2: a PUT for a session token, then a
// GET that carries it. The endpoint is a setting, so tests point it at a loopback server.
import { InvalidArgumentError, type MachineIdProvider, StoreUnavailableError } from '@ids/engine';
import { dotted } from './address.js';
import { builtin } from './builtins.js';
import { MetadataAnswerError, MetadataRefusedError, received } from './errors.js';
import { ipv4MachineId, isPrivateIPv4 } from './ipv4.js';

/** The instance metadata service's address on EC2 (link-local: reachable only from an instance). */
export const EC2_METADATA_ENDPOINT = 'http://169.254.169.254';
/** How long `ec2MachineId` waits for both requests together, by default. */
export const DEFAULT_EC2_TIMEOUT_MS = 1000;

/** Where the metadata service is and how long to wait for it. */
export interface Ec2Options {
  /** Milliseconds for the token and the address together, 1 to 60000. Default 1000. */
  readonly timeoutMs?: number;
  /** The service's base URL, `http://host[:port]`. Default EC2_METADATA_ENDPOINT. */
  readonly endpoint?: string;
}

// A token or an address is tens of bytes; anything much longer is not IMDS talking.
const MAX_ANSWER = 1024;

interface Answer {
  readonly status: number;
  readonly body: string;
}

function checkEc2Options(options: Ec2Options): Required<Ec2Options> {
  const { timeoutMs = DEFAULT_EC2_TIMEOUT_MS, endpoint = EC2_METADATA_ENDPOINT } = options;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) {
    throw new InvalidArgumentError(
      `timeoutMs: expected an integer from 1 to 60000, received ${received(timeoutMs)}`,
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(endpoint);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'http:' || url.pathname !== '/' || url.search || url.hash) {
    throw new InvalidArgumentError(
      `endpoint: expected a URL http://host[:port], received ${received(endpoint)}`,
    );
  }
  return { timeoutMs, endpoint: url.origin };
}

function call(
  method: string,
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = builtin('node:http').request(url, { method, headers, signal, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        if (body.length > MAX_ANSWER) {
          req.destroy();
          reject(
            new MetadataAnswerError(
              `${method} ${url}: the answer is longer than ${MAX_ANSWER} bytes; not the metadata service`,
            ),
          );
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (signal.aborted) {
        reject(
          new StoreUnavailableError(
            'ec2-metadata',
            'machine-id',
            `${method} ${url}: no answer within ${timeoutMs} ms (not on EC2, or the metadata hop limit is too low for a container)`,
            { cause: error },
          ),
        );
      } else {
        reject(
          new StoreUnavailableError(
            'ec2-metadata',
            'machine-id',
            `${method} ${url}: ${error.code ?? error.message} (not on EC2, or the metadata service is off)`,
            { cause: error },
          ),
        );
      }
    });
    req.end();
  });
}

const shown = (body: string) => JSON.stringify(body.length > 60 ? `${body.slice(0, 57)}...` : body);

/**
 * The instance's private IPv4 address (`local-ipv4`) from the metadata service, by IMDSv2.
 * @throws InvalidArgumentError for bad options; StoreUnavailableError when nothing answers
 * within `timeoutMs` or the connection is refused (off EC2); MetadataRefusedError when the token
 * request or the token is refused; MetadataAnswerError for an answer that is not a token or not
 * a private IPv4 address.
 */
export async function ec2PrivateIPv4(options: Ec2Options = {}): Promise<string> {
  const { timeoutMs, endpoint } = checkEc2Options(options);
  const signal = AbortSignal.timeout(timeoutMs);
  const tokenUrl = `${endpoint}/latest/api/token`;
  const token = await call(
    'PUT',
    tokenUrl,
    { 'X-aws-ec2-metadata-token-ttl-seconds': '60' },
    signal,
    timeoutMs,
  );
  if (token.status !== 200) {
    throw new MetadataRefusedError(
      `PUT ${tokenUrl}: the IMDSv2 token request was refused with HTTP ${token.status}`,
    );
  }
  if (!/^[A-Za-z0-9+/=_-]{1,512}$/.test(token.body)) {
    throw new MetadataAnswerError(`PUT ${tokenUrl}: expected an IMDSv2 token, received ${shown(token.body)}`);
  }
  const addressUrl = `${endpoint}/latest/meta-data/local-ipv4`;
  const answer = await call('GET', addressUrl, { 'X-aws-ec2-metadata-token': token.body }, signal, timeoutMs);
  if (answer.status !== 200) {
    throw new MetadataRefusedError(
      `GET ${addressUrl}: refused with HTTP ${answer.status}${answer.status === 401 ? ' (the token was not accepted)' : ''}`,
    );
  }
  const address = answer.body.trim();
  if (dotted(address) === undefined || !isPrivateIPv4(address)) {
    throw new MetadataAnswerError(
      `GET ${addressUrl}: expected a private IPv4 address, received ${shown(answer.body)}`,
    );
  }
  return address;
}

/**
 * Go's EC2 machine ID: the low 16 bits of the instance's private IPv4 from the metadata service
 * (IMDSv2), refused when it does not fit the machine field. Asynchronous: use it with `create()`.
 * Off EC2 it fails within `timeoutMs` with StoreUnavailableError; it never falls back.
 *
 * @throws InvalidArgumentError at once for bad options. The provider rejects with what
 * `ec2PrivateIPv4` throws, or MachineIdDoesNotFitError.
 */
export function ec2MachineId(options: Ec2Options = {}): MachineIdProvider {
  const checked = checkEc2Options(options);
  return async ({ bits }) => {
    return ipv4MachineId(await ec2PrivateIPv4(checked), bits);
  };
}
