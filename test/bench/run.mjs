// Runs the benchmarks named on the command line (all by default) and prints their tables.
// `npm run bench` from the repository root builds first, then runs this.
import { spawn } from 'node:child_process';
import { benchCli } from './cli.mjs';
import { benchColdStart } from './cold-start.mjs';
import { benchConcurrency } from './concurrency.mjs';
import { benchEtcd } from './etcd.mjs';
import { benchFleet } from './fleet.mjs';
import { benchIdServer } from './id-server.mjs';
import { benchLock } from './lock.mjs';
import { benchRedis } from './redis.mjs';
import { benchSegment } from './segment.mjs';
import { benchServer } from './server.mjs';
import { benchSharedLease } from './shared-lease.mjs';
import { benchSnowflake } from './snowflake.mjs';
import { benchSonyflake } from './sonyflake.mjs';
import { benchThreads } from './threads.mjs';
import { benchZookeeper } from './zookeeper.mjs';

const suites = {
  sonyflake: benchSonyflake,
  concurrency: benchConcurrency,
  snowflake: benchSnowflake,
  threads: benchThreads,
  etcd: benchEtcd,
  redis: benchRedis,
  lock: benchLock,
  zookeeper: benchZookeeper,
  'id-server': benchIdServer,
  segment: benchSegment,
  server: benchServer,
  'shared-lease': benchSharedLease,
  'cold-start': benchColdStart,
  cli: benchCli,
  fleet: benchFleet,
};

// `--loops N`: N busy loops take the CPU for the whole run, as the stress check's do, for
// figures on a loaded machine (issue 33 asks claim latency under load).
const args = process.argv.slice(2);
const loopsAt = args.indexOf('--loops');
const loops = loopsAt === -1 ? 0 : Number(args[loopsAt + 1]);
if (!Number.isInteger(loops) || loops < 0 || loops > 64) {
  console.error(`--loops: expected a whole number of busy loops from 0 to 64, received ${args[loopsAt + 1]}`);
  process.exit(2);
}
// Flags that take a value (the fleet simulator reads its own from the command line).
const valued = new Set(['--loops', '--holders', '--ttl', '--window', '--stores']);
const wanted = args.filter((arg, i) => !arg.startsWith('-') && !valued.has(args[i - 1] ?? ''));
const unknown = wanted.filter((name) => !(name in suites));
if (unknown.length > 0) {
  console.error(
    `unknown benchmark ${unknown.join(', ')}; expected any of: ${Object.keys(suites).join(', ')}`,
  );
  process.exit(2);
}
const busy = Array.from({ length: loops }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);
console.log(
  `node ${process.version}, ${new Date().toISOString()}${loops > 0 ? `, ${loops} busy loops beside the run` : ''}`,
);
try {
  for (const name of wanted.length > 0 ? wanted : Object.keys(suites)) {
    const { title, table } = await suites[name]();
    console.log(`\n## ${title}\n\n${table}`);
  }
} finally {
  for (const child of busy) child.kill('SIGKILL');
}
