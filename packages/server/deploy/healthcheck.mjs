// The image's HEALTHCHECK: GET /health/ready on the port the server listens on, however it was
// set (PORT, `--port N`, `--port=N`, or 0 for a free one). Read from /proc of the server's
// process, PID 1 in the container (the ENTRYPOINT is exec form), not from this process's own
// environment, which `docker run IMAGE --port 9000` does not change:
//   1. the TCP sockets the server listens on (its open files against /proc/PID/net/tcp and tcp6);
//   2. when those cannot be read: its arguments (the last --port), else its PORT, else 8080,
//      the order ids-server reads them in.
// Exit 0 when ready, else 1. IDS_HEALTHCHECK_PID names another process (the tests' servers).
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

const pid = process.env.IDS_HEALTHCHECK_PID ?? '1';
const proc = (file) => `/proc/${pid}/${file}`;
// No server process, no health (and no asking whatever else answers on its port).
if (!existsSync(proc('cmdline'))) process.exit(1);

/** Ports of the sockets in LISTEN state (0A) that the process holds open. */
function listeningPorts() {
  const inodes = new Set();
  for (const fd of readdirSync(proc('fd'))) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(proc(`fd/${fd}`)));
      if (match) inodes.add(match[1]);
    } catch {
      // Closed between the listing and the read.
    }
  }
  const ports = [];
  for (const table of ['net/tcp', 'net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(proc(table), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (fields[3] === '0A' && inodes.has(fields[9]))
        ports.push(Number.parseInt(fields[1].split(':')[1], 16));
    }
  }
  return ports;
}

/** The port from the server's arguments or environment, for when its sockets cannot be read. */
function configuredPort() {
  const entries = (file) => {
    try {
      return readFileSync(proc(file), 'utf8').split('\0');
    } catch {
      return [];
    }
  };
  const args = entries('cmdline');
  for (let i = args.length - 1; i >= 0; i--) {
    if (args[i] === '--port' && args[i + 1]) return args[i + 1];
    if (args[i].startsWith('--port=')) return args[i].slice('--port='.length);
  }
  const env = entries('environ').find((entry) => entry.startsWith('PORT='));
  return env ? env.slice('PORT='.length) : (process.env.PORT ?? '8080');
}

let port;
try {
  port = listeningPorts()[0];
} catch {
  port = undefined;
}
port ??= configuredPort();
fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(4000) }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
