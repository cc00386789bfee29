// Sonyflake through nextId() and nextIdSync() against its 25,600 IDs/s ceiling (256 per 10 ms).
import { Sonyflake } from '@ids/sonyflake';
import {
  audit,
  ceilingShare,
  drainAsync,
  drainSync,
  fmt,
  formatTable,
  idleLoop,
  timed,
  timedAsync,
  watchLoop,
} from './lib/measure.mjs';

export async function benchSonyflake({ seconds = 3 } = {}) {
  const ceiling = 25_600;
  const rows = [];
  const idle = await idleLoop(seconds * 1000);

  const sync = new Sonyflake({ machineId: 1 });
  const s = timed(() => drainSync(() => sync.nextIdSync(), seconds));
  rows.push(row('nextIdSync()', sync, s, 'blocks its thread by design'));

  const async_ = new Sonyflake({ machineId: 2 });
  const a = await watchLoop(() => timedAsync(() => drainAsync(() => async_.nextId(), seconds)));
  rows.push(
    row('nextId()', async_, a.value, `${fmt.ms(a.longestGapMs)} ms (idle ${fmt.ms(idle.longestGapMs)} ms)`),
  );

  const batch = new Sonyflake({ machineId: 3 });
  const b = await watchLoop(() =>
    timedAsync(async () => {
      const ids = [];
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) ids.push(...(await batch.nextIds(1024)));
      return ids;
    }),
  );
  rows.push(
    row(
      'nextIds(1024)',
      batch,
      b.value,
      `${fmt.ms(b.longestGapMs)} ms (idle ${fmt.ms(idle.longestGapMs)} ms)`,
    ),
  );

  return {
    title: `Sonyflake (39-bit time in 10 ms units, 8-bit sequence): ${fmt.int(ceiling)} IDs/s ceiling, ${seconds} s per path`,
    table: formatTable(
      [
        'path',
        'IDs',
        'IDs/s',
        '% of ceiling (slots used)',
        'duplicates',
        'increasing',
        'CPU s per 1M IDs',
        'longest event-loop gap',
      ],
      rows,
    ),
  };
}

function row(path, generator, { value: ids, seconds, cpuSeconds }, gap) {
  const { duplicates, increasing } = audit(ids);
  return [
    path,
    fmt.int(ids.length),
    fmt.int(ids.length / seconds),
    fmt.pct(ceilingShare(generator, ids)),
    duplicates,
    increasing ? 'yes' : 'NO',
    fmt.s((cpuSeconds / ids.length) * 1e6),
    gap,
  ];
}
