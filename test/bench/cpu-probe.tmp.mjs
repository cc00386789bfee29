// temporary probe (not committed): server CPU per GET /id over a fixed count of requests
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
const bin = join(dirname(fileURLToPath(import.meta.resolve('@ids/server'))), 'bin.js');
const BARE = `
import { createServer } from 'node:http';
let n = 10n ** 17n;
const server = createServer((req, res) => {
  const body = JSON.stringify({ id: String(n++) });
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;
const cpu = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) / 100; };
async function start(args, env = {}) {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  const url = await new Promise((res) => child.stdout.on('data', (c) => { out += c; const m = /listening on (\S+)/.exec(out); if (m) res(m[1]); }));
  return { url, child };
}
const N = Number(process.env.N ?? 60000);
const which = process.argv.slice(2);
for (const name of which) {
  const target = name === 'old' ? '/work/main/packages/server/dist/bin.js' : bin;
  const s = name === 'bare' ? await start([...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/rb/bare'] : []), '--input-type=module', '-e', BARE]) : await start([...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/rb'] : []), target, '--machines', '3', '--machine-id-source', 'explicit'], { PORT: '0', IDS_MACHINE_ID: '1,2,3' });
  await autocannon({ url: `${s.url}/id`, connections: 64, amount: 10000 });
  const c0 = cpu(s.child.pid);
  const r = await autocannon({ url: `${s.url}/id`, connections: 64, amount: N });
  const c = cpu(s.child.pid) - c0;
  console.log(name, 'µs/req', ((c * 1e6) / N).toFixed(1), 'rps', Math.round(r.requests.average), 'p99', r.latency.p99, 'non2xx', r.non2xx);
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
}
