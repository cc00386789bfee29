// Many callers at once on one Sonyflake (issue 9): c loops of `await nextId()` started together,
// for a few seconds each. For every ID the wall clock (the generator's own) is read right after
// its call resolved: an ID whose tick starts after that moment was handed out early. The
// resolution order is kept to check it equals the ID order. Errors are counted, not thrown.
import { wallClock } from '@ids/engine';
import { Sonyflake } from '@ids/sonyflake';
import { ceilingShare, fmt, formatTable, idleLoop, timedAsync, watchLoop } from './lib/measure.mjs';

const CEILING = 25_600;

async function run(callers, seconds, machineId) {
  const gen = new Sonyflake({ machineId });
  // Warm-up: the JIT sees the real calls before anything is counted.
  await Promise.all(Array.from({ length: callers }, () => gen.nextIds(64)));
  const ids = [];
  const times = [];
  const errors = new Map();
  const until = performance.now() + seconds * 1000;
  const watched = await watchLoop(() =>
    timedAsync(() =>
      Promise.all(
        Array.from({ length: callers }, async () => {
          while (performance.now() < until) {
            try {
              const id = await gen.nextId();
              times.push(wallClock.now());
              ids.push(id);
            } catch (error) {
              const name = error instanceof Error ? error.name : String(error);
              errors.set(name, (errors.get(name) ?? 0) + 1);
            }
          }
        }),
      ),
    ),
  );
  let ahead = 0;
  let maxLead = 0;
  let outOfOrder = 0;
  for (let i = 0; i < ids.length; i++) {
    const lead = gen.toTime(ids[i]).getTime() - times[i];
    if (lead > 0) {
      ahead++;
      maxLead = Math.max(maxLead, lead);
    }
    if (i > 0 && ids[i] <= ids[i - 1]) outOfOrder++;
  }
  await gen.close();
  return { ids, ahead, maxLead, outOfOrder, errors, watched };
}

export async function benchConcurrency({ seconds = 3 } = {}) {
  const idle = await idleLoop(1000);
  const rows = [];
  for (const [callers, machineId] of [
    [1, 11],
    [16, 12],
    [128, 13],
  ]) {
    const r = await run(callers, seconds, machineId);
    const gen = new Sonyflake({ machineId });
    const errors = [...r.errors].map(([name, n]) => `${fmt.int(n)} ${name}`).join(', ') || '0';
    rows.push([
      callers,
      fmt.int(r.ids.length),
      fmt.int(r.ids.length / r.watched.value.seconds),
      fmt.pct(ceilingShare(gen, r.ids)),
      fmt.int(r.ahead),
      r.ahead > 0 ? fmt.ms(r.maxLead) : '–',
      fmt.int(r.outOfOrder),
      errors,
      fmt.s((r.watched.value.cpuSeconds / r.ids.length) * 1e6),
      `${fmt.ms(r.watched.longestGapMs)} ms (idle ${fmt.ms(idle.longestGapMs)} ms)`,
    ]);
  }
  return {
    title: `Concurrent nextId() callers on one Sonyflake (${fmt.int(CEILING)} IDs/s ceiling), ${seconds} s per row; "ahead" = IDs whose tick had not started when their call resolved`,
    table: formatTable(
      [
        'callers',
        'IDs',
        'IDs/s',
        '% of ceiling (slots used)',
        'IDs ahead of tick',
        'max lead ms',
        'resolved out of order',
        'errors',
        'CPU s per 1M IDs',
        'longest event-loop gap',
      ],
      rows,
    ),
  };
}
