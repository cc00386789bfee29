import { importOptional, segmentStoreNeeds } from '@ids/engine/internal';
import { type Command, defineCommand, type Flags } from '../command.js';
import { UsageError } from '../errors.js';
import { print } from '../io.js';
import { defaultSegmentStore } from '../schemes.js';

// The largest `after`: one ID must remain below 2^63 - 1 (the segment package's MAX_ID - 1).
const MAX_AFTER = 2n ** 63n - 2n;

/** `--after`: digits only (underscores allowed), 0 to 2^63 - 2, read as a bigint (exact past 2^53). */
function parseAfter(text: string | undefined): bigint {
  const expected = `--after: expected the ID before the first, a whole number from 0 to ${MAX_AFTER} (0 for a new tag; for a tag its store forgot, at least the highest ID it ever issued)`;
  if (text === undefined) throw new UsageError(`${expected}, received nothing`);
  const digits = text.replaceAll('_', '');
  if (!/^[0-9]{1,19}$/.test(digits) || BigInt(digits) > MAX_AFTER) {
    throw new UsageError(`${expected}, received ${JSON.stringify(text)}`);
  }
  return BigInt(digits);
}

const FLAGS = {
  after: { type: 'string', value: 'N', help: 'the ID before the first (required): 0 for a new tag' },
  store: {
    type: 'string',
    value: 'WHERE',
    help: 'postgres://..., mysql://..., redis://... or pglite:DIR, as for ids generate --scheme segment',
    byDefault: 'pglite:$XDG_DATA_HOME/ids/segment',
  },
} as const satisfies Flags;

export const segment: Command = defineCommand({
  name: 'segment',
  summary: 'create a segment tag in its store, once (create-tag)',
  flags: FLAGS,
  usage: `Usage: ids segment create-tag TAG --after N [--store WHERE]

Creates TAG in the segment store, so that its first ID is N + 1. This is the one way a tag is
made: servers and libraries never create one when they start, so a store that lost its data
(Redis without persistence) makes the tag unknown instead of serving 1 again. Run it once per
tag, and again only when the store forgot the tag, with N at least the highest ID the tag ever
issued (say, the largest order number in your database).

On a tag the store holds, N above every ID it handed out raises the tag there; anything lower
is refused (ERR_IDS_SEGMENT_TAG_EXISTS, exit 1), so a tag never moves down. A step/offset
sequence tag is never moved. For pglite:DIR, stop the server using DIR first: one process per
directory.`,
  positionals: true,
  async run({ values, positionals }, io) {
    const [action, tag, ...extra] = positionals;
    if (action !== 'create-tag') {
      throw new UsageError(
        `expected create-tag, received ${action === undefined ? 'nothing' : JSON.stringify(action)}`,
      );
    }
    if (tag === undefined || extra.length > 0) {
      throw new UsageError(
        `create-tag: expected one TAG, received ${
          tag === undefined
            ? 'none'
            : positionals
                .slice(1)
                .map((p) => JSON.stringify(p))
                .join(' ')
        }`,
      );
    }
    const after = parseAfter(values.after);
    const where = values.store ?? defaultSegmentStore(io.env);
    const { use, also } = segmentStoreNeeds(where);
    const { checkTag, openSegmentStore } = await importOptional(
      '@ids/segment',
      () => import('@ids/segment'),
      use,
      also,
    );
    try {
      checkTag(tag); // before a store is opened (PGlite takes seconds to start)
    } catch (error) {
      throw new UsageError((error as Error).message, { cause: error });
    }
    const store = await openSegmentStore(where);
    try {
      await store.createTag(tag, { after });
    } finally {
      await store.close();
    }
    await print(io.stdout, `tag ${tag} in ${store.kind}: IDs continue above ${after}\n`);
    return 0;
  },
});
