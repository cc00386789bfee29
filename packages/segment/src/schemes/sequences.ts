// Step/offset on PostgreSQL and PGlite: a sequence per tag, `INCREMENT BY servers` from this
// database's place, each value a block of `blockSize` IDs. Database `offset` of `servers` draws
// the blocks offset - 1, offset - 1 + servers, ..., so the databases never overlap and need no
// coordination between them. The block size is fixed: the dynamic step does not apply.
import { MAX_ID } from '@ids/engine';
import type { Dialect } from '../dialect.js';
import { StoreCorruptError, TagExistsError, UnknownTagError } from '../errors.js';
import { type CheckedOperations, storedMaxId } from '../store.js';
import { corrupt } from './leaf-alloc.js';
import type { StepOffsetPlan } from './step-offset.js';

/** The sequence of a tag: quoted, since tags keep their case and may hold '.' and '-'. */
const sequenceName = (tag: string) => `"ids_seg_${tag}"`;

/** The sequences of `plan` on `db`. */
export function postgresSequences(db: Dialect, plan: Required<StepOffsetPlan>): CheckedOperations {
  const { servers, offset, blockSize } = plan;
  const block = BigInt(blockSize);
  const where = (tag: string) => `tag ${JSON.stringify(tag)} in ${db.name} sequence ${sequenceName(tag)}`;
  return {
    create(tag, after) {
      // The first block of this database that lies wholly above `after`: block numbers of this
      // database are k, k + n, k + 2n, ... with k its place counted from 0.
      const lowest = (after + block - 1n) / block;
      const n = BigInt(servers);
      const k = BigInt(offset - 1);
      const start = lowest <= k ? k : k + ((lowest - k + n - 1n) / n) * n;
      return db.session(where(tag), async (run) => {
        try {
          await run(
            `CREATE SEQUENCE ${sequenceName(tag)} AS bigint INCREMENT BY ${servers} MINVALUE 0 START ${start}`,
          );
        } catch (error) {
          // A sequence is not raised in place (its blocks interleave with other databases'):
          // an existing one, or one created at the same moment, is refused.
          if (db.failure(error) !== 'exists') throw error;
          throw new TagExistsError(
            `${where(tag)}: the sequence exists; expected a tag not yet created, received one that is. A sequence tag is never moved`,
            { cause: error },
          );
        }
      });
    },
    take(tag) {
      const at = where(tag);
      return db.session(at, async (run) => {
        let rows: Record<string, unknown>[];
        try {
          ({ rows } = await run('SELECT nextval($1::regclass)::text AS block', [sequenceName(tag)]));
        } catch (error) {
          const failure = db.failure(error);
          if (failure === 'missing')
            throw new UnknownTagError(
              `${at}: no such sequence; create the tag first (createTag, ids segment create-tag)`,
              {
                cause: error,
              },
            );
          if (failure === 'corrupt') throw corrupt(error, at);
          throw error;
        }
        const b = storedMaxId(rows[0]?.block, at);
        const last = (b + 1n) * block;
        if (last > MAX_ID)
          throw new StoreCorruptError(`${at}: block ${b} of ${blockSize} IDs ends past ${MAX_ID}`);
        return { first: b * block + 1n, last };
      });
    },
  };
}
