// Runs the benchmarks named on the command line (all by default) and prints their tables.
// `npm run bench` from the repository root builds first, then runs this.
import { benchCli } from './cli.mjs';
import { benchColdStart } from './cold-start.mjs';
import { benchConcurrency } from './concurrency.mjs';
import { benchEtcd } from './etcd.mjs';
import { benchIdServer } from './id-server.mjs';
import { benchLock } from './lock.mjs';
import { benchRedis } from './redis.mjs';
import { benchSegment } from './segment.mjs';
import { benchServer } from './server.mjs';
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
  'cold-start': benchColdStart,
  cli: benchCli,
};

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = wanted.filter((name) => !(name in suites));
if (unknown.length > 0) {
  console.error(
    `unknown benchmark ${unknown.join(', ')}; expected any of: ${Object.keys(suites).join(', ')}`,
  );
  process.exit(2);
}
console.log(`node ${process.version}, ${new Date().toISOString()}`);
for (const name of wanted.length > 0 ? wanted : Object.keys(suites)) {
  const { title, table } = await suites[name]();
  console.log(`\n## ${title}\n\n${table}`);
}
