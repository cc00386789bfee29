// A small HTTP ID service on node:http, in the spirit of Leaf's server mode: one Sonyflake per
// process behind four GET routes. IDs travel as decimal strings, since JSON numbers lose
// precision past 2^53 and a Sonyflake ID passes 2^53 about 62 days after its start time.
//
//   GET /id               -> 200 { "id": "..." }
//   GET /ids?count=N      -> 200 { "ids": ["...", ...] }      N from 1 to maxCount (1000)
//   GET /decompose/:id    -> 200 { "id", "time", "elapsedMs", "sequence", "machine" }
//   GET /health           -> 200 { "status": "ok", "machine": N }, or 503 as /id would be
//
// Bad input gets a 4xx JSON error { "error": { "code", "message" } }; a generator that cannot
// issue IDs right now (clock stepped back past its bound, claim lost, closed) gets 503. No
// request can crash the process: every handler's failure becomes a response.
import { createServer } from 'node:http';
import { IdsError, InvalidArgumentError, idReplacer, parseId, Sonyflake } from '@ids/sonyflake';
import { chooseMachineId } from './machine-id.mjs';

/**
 * Default bound on N in `/ids?count=N`. A Sonyflake issues 256 IDs per 10 ms tick, so 1000 IDs
 * take up to about 40 ms; a larger batch would hold its connection for longer and delay every
 * other request waiting for the same generator.
 */
export const DEFAULT_MAX_COUNT = 1000;
/** The largest `maxCount` accepted: 100,000 IDs take about 4 s at Sonyflake's 25,600 IDs/s. */
export const MAX_COUNT_LIMIT = 100_000;

const JSON_TYPE = 'application/json; charset=utf-8';

/** An answer to a bad request: its HTTP status, a stable code and a message for the client. */
class HttpError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   * @param {Record<string, string>} [headers]
   */
  constructor(status, code, message, headers = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/**
 * A query value or path segment quoted for an error message, cut short if long.
 * @param {string} value
 */
function quote(value) {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 * @param {Record<string, string>} [headers]
 */
function send(res, status, body, headers = {}) {
  const text = JSON.stringify(body, idReplacer);
  res.writeHead(status, {
    'content-type': JSON_TYPE,
    'content-length': String(Buffer.byteLength(text)),
    // An ID must never come from a cache: two clients would get the same one.
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/**
 * @param {URLSearchParams} query
 * @param {number} maxCount
 */
function parseCount(query, maxCount) {
  const values = query.getAll('count');
  const expected = `expected count=N with N an integer from 1 to ${maxCount}`;
  if (values.length !== 1) {
    throw new HttpError(
      400,
      'ERR_INVALID_COUNT',
      `${expected}, received ${values.length === 0 ? 'no count' : `${values.length} count parameters`}`,
    );
  }
  const raw = /** @type {string} */ (values[0]);
  const count = /^[0-9]{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(count >= 1 && count <= maxCount)) {
    throw new HttpError(400, 'ERR_INVALID_COUNT', `${expected}, received ${quote(raw)}`);
  }
  return count;
}

/**
 * The request handler over a generator, for embedding in another server (startIdServer uses it).
 *
 * @param {Sonyflake} sonyflake
 * @param {{ maxCount?: number, onError?: (error: unknown) => void }} [options]
 *   `maxCount`: the bound on N in /ids?count=N (default DEFAULT_MAX_COUNT, 1 to MAX_COUNT_LIMIT);
 *   `onError`: receives unexpected failures (answered with 500); default console.error.
 * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => Promise<void>}
 * @throws {InvalidArgumentError} for a maxCount out of range
 */
export function createIdHandler(sonyflake, { maxCount = DEFAULT_MAX_COUNT, onError = console.error } = {}) {
  if (!Number.isInteger(maxCount) || maxCount < 1 || maxCount > MAX_COUNT_LIMIT) {
    throw new InvalidArgumentError(
      `maxCount: expected an integer from 1 to ${MAX_COUNT_LIMIT}, received ${JSON.stringify(maxCount)}`,
    );
  }

  /** @type {[RegExp, (match: RegExpExecArray, query: URLSearchParams) => Promise<unknown> | unknown][]} */
  const routes = [
    [/^\/id$/, async () => ({ id: await sonyflake.nextId() })],
    [/^\/ids$/, async (_, query) => ({ ids: await sonyflake.nextIds(parseCount(query, maxCount)) })],
    [
      // The segment is used as sent (no percent-decoding): an ID is plain digits.
      /^\/decompose\/([^/]*)$/,
      ([, segment]) => {
        const id = parseId(/** @type {string} */ (segment));
        const { sequence, machine } = sonyflake.decompose(id);
        return {
          id,
          time: sonyflake.toTime(id).toISOString(),
          elapsedMs: sonyflake.elapsedTime(id),
          sequence,
          machine,
        };
      },
    ],
    // Healthy means /id can answer now: the check takes an ID (one slot of 256 per 10 ms tick),
    // so a closed generator, a lost claim or a clock stepped back past its bound answers 503
    // here exactly as /id would, and a load balancer stops sending traffic.
    [
      /^\/health$/,
      async () => {
        await sonyflake.nextId();
        return { status: 'ok', machine: sonyflake.machine };
      },
    ],
  ];

  return async function handle(req, res) {
    try {
      const target = req.url ?? '';
      const mark = target.indexOf('?');
      const path = mark < 0 ? target : target.slice(0, mark);
      const query = new URLSearchParams(mark < 0 ? '' : target.slice(mark + 1));
      for (const [pattern, respond] of routes) {
        const match = pattern.exec(path);
        if (!match) continue;
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          throw new HttpError(
            405,
            'ERR_METHOD_NOT_ALLOWED',
            `expected GET or HEAD for ${path}, received ${req.method}`,
            { allow: 'GET, HEAD' },
          );
        }
        send(res, 200, await respond(match, query));
        return;
      }
      throw new HttpError(
        404,
        'ERR_NOT_FOUND',
        `no route for ${quote(path)}: expected /id, /ids?count=N, /decompose/:id or /health`,
      );
    } catch (error) {
      answerError(res, error, onError);
    }
  };
}

/**
 * Turns a failure into a response. The ID errors of bad input are 400; an error of the
 * generator itself (clock stepped back past its bound, claim lost, closed, lifetime over) is
 * 503, since the request was fine and another instance, or this one later, can serve it.
 *
 * @param {import('node:http').ServerResponse} res
 * @param {unknown} error
 * @param {(error: unknown) => void} onError
 */
function answerError(res, error, onError) {
  let status = 500;
  let code = 'ERR_INTERNAL';
  let message = 'internal error';
  /** @type {Record<string, string>} */
  let headers = {};
  if (error instanceof HttpError) {
    ({ status, code, message, headers } = error);
  } else if (error instanceof IdsError) {
    code = error.code;
    message = error.message;
    status = error.code === 'ERR_IDS_INVALID_ID' ? 400 : 503;
    if (error.code === 'ERR_IDS_CLOCK_BACKWARDS') headers = { 'retry-after': '1' };
  } else {
    onError(error);
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  send(res, status, { error: { code, message } }, headers);
}

/**
 * Answers what the HTTP parser rejects (garbage, oversized headers) with a JSON error, instead
 * of Node's empty response. The connection closes afterwards.
 *
 * @param {Error & { code?: string }} error
 * @param {import('node:stream').Duplex} socket
 */
function answerClientError(error, socket) {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
  const body = JSON.stringify({
    error: { code: 'ERR_BAD_REQUEST', message: `malformed HTTP request (${error.code ?? error.message})` },
  });
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * @typedef {object} IdServerOptions
 * @property {number} [port] TCP port, 0 to 65535; 0 (the default) picks a free one.
 * @property {string} [host] Address to listen on. Default 127.0.0.1 (loopback only).
 * @property {import('@ids/sonyflake').MachineIdSource} [machineId] Default: `settings.machineId`, else the auto chain of the machine-file package (IDS_MACHINE_ID, private IPv4, host claim; see machine-id.mjs).
 * @property {Record<string, string | undefined>} [env] Where IDS_MACHINE_ID and IDS_CLAIM_DIR are read. Default process.env.
 * @property {import('@ids/sonyflake').SonyflakeSettings} [settings] Any other Sonyflake settings (clock, startTime, ...).
 * @property {number} [maxCount] Bound on N in /ids?count=N. Default DEFAULT_MAX_COUNT (1000); 1 to MAX_COUNT_LIMIT.
 * @property {(error: unknown) => void} [onError] Receives unexpected failures (answered with 500). Default console.error.
 */

/**
 * @typedef {object} RunningIdServer
 * @property {string} url Base URL, e.g. http://127.0.0.1:40123
 * @property {number} port The port it listens on (the chosen one when 0 was asked).
 * @property {import('node:http').Server} server
 * @property {Sonyflake} sonyflake
 * @property {string} machineIdFrom How the machine ID was chosen (the auto chain's trail, or the option).
 * @property {() => Promise<void>} close Stops accepting, lets requests in flight finish, then closes the generator.
 */

/**
 * Builds the Sonyflake and starts the HTTP server.
 *
 * @param {IdServerOptions} [options]
 * @returns {Promise<RunningIdServer>}
 * @throws {InvalidArgumentError} for a bad port or maxCount; AutoMachineIdError when no machine ID
 *   can be had; the Sonyflake settings' typed errors (InvalidMachineIdError, ...);
 *   the listen error (EADDRINUSE, ...) as is.
 */
export async function startIdServer(options = {}) {
  const { port = 0, host = '127.0.0.1', env = process.env, settings = {}, maxCount, onError } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError(
      `port: expected an integer from 0 to 65535, received ${JSON.stringify(port)}`,
    );
  }
  const { machineId, how } = chooseMachineId({ machineId: options.machineId ?? settings.machineId }, env);
  const sonyflake = await Sonyflake.create({ ...settings, machineId });
  /** @type {import('node:http').Server | undefined} */
  let server;
  try {
    const handle = createIdHandler(sonyflake, { maxCount, onError });
    let closing = false;
    server = createServer((req, res) => {
      // While closing, end each keep-alive connection after its response: a request that
      // arrives now is told so, and one that was in flight has its connection closed once
      // idle, rather than left open until its keep-alive timeout (5 s) delays close().
      if (closing) res.setHeader('connection', 'close');
      res.on('finish', () => {
        if (closing) setImmediate(() => server?.closeIdleConnections());
      });
      void handle(req, res);
    });
    server.on('clientError', answerClientError);
    const listening = server;
    await new Promise((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(port, host, () => {
        listening.off('error', reject);
        resolve(undefined);
      });
    });
    const address = /** @type {import('node:net').AddressInfo} */ (listening.address());
    const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return {
      url: `http://${urlHost}:${address.port}`,
      port: address.port,
      server: listening,
      sonyflake,
      machineIdFrom: how,
      async close() {
        closing = true;
        await new Promise((resolve) => {
          listening.close(() => resolve(undefined));
          listening.closeIdleConnections();
        });
        await sonyflake.close();
      },
    };
  } catch (error) {
    server?.close();
    await sonyflake.close();
    throw error;
  }
}
