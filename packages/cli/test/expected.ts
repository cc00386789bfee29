// The whole of `ids compare` with no options. Sonyflake (2014 epoch) lasts 174 years, to
// 2188-11-16T03:28:58.880Z; Twitter's layout 69. Every figure follows from the bit widths
// (see packages/engine/test/layout.test.ts for how each one is pinned down).
export const COMPARE_DEFAULT = [
  '                   sonyflake                 sonyflake-v2              twitter                            discord',
  'time               39 bits of 10 ms          39 bits of 10 ms          41 bits of 1 ms                    41 bits of 1 ms',
  'sequence           8 bits                    8 bits                    12 bits                            12 bits',
  'machine            16 bits                   16 bits                   10 bits (datacenter 5 + worker 5)  10 bits (worker 5 + process 5)',
  'order below time   sequence-machine          sequence-machine          machine-sequence                   machine-sequence',
  'epoch              2014-09-01T00:00:00.000Z  2025-01-01T00:00:00.000Z  2010-11-04T01:42:54.657Z           2015-01-01T00:00:00.000Z',
  'lifetime           174 years                 174 years                 69 years                           69 years',
  'ends at            2188-11-16T03:28:58.880Z  2199-03-19T03:28:58.880Z  2080-07-10T17:30:30.209Z           2084-09-06T15:47:35.552Z',
  'IDs/s per machine  25,600                    25,600                    4,096,000                          4,096,000',
  'machines           65,536                    65,536                    1,024                              1,024',
  'past 2^53 from     2014-11-02T03:18:29.120Z  2025-03-04T03:18:29.120Z  2010-11-28T22:14:18.305Z           2015-01-25T20:31:23.648Z',
  '18 digits from     2016-07-21T20:50:44.780Z  2026-11-21T20:50:44.780Z  2011-08-07T00:27:12.568Z           2015-10-03T22:44:17.911Z',
  '19 digits from     2033-07-21T16:27:27.760Z  2043-11-21T16:27:27.760Z  2018-05-25T13:05:53.759Z           2022-07-22T11:22:59.102Z',
].join('\n');
