// Segments by tag, for a service that serves many tags (Leaf's /api/segment/get/{tag}).
import { InvalidArgumentError } from '@ids/engine';
import { received } from '@ids/engine/internal';
import { refuseCreateTag, Segments, type SegmentsOptions } from './segments.js';
import { checkTag } from './store.js';

/** The settings every tag's Segments is created with (all of SegmentsOptions but `tag`). */
export type SegmentTagsOptions = Omit<SegmentsOptions, 'tag'>;

/**
 * One Segments per tag, made on the first request for the tag and kept: what an ID service's
 * route by tag calls. Tags must exist in the store (created apart, once): a missing one rejects
 * with UnknownTagError on every request until it is created. Concurrent first requests for one tag share one creation; a creation that
 * fails is forgotten, so the next request tries again.
 */
export class SegmentTags {
  readonly #options: SegmentTagsOptions;
  readonly #byTag = new Map<string, Promise<Segments>>();
  #closed = false;

  /** @throws InvalidArgumentError when options has no store, or holds `createTag`. */
  constructor(options: SegmentTagsOptions) {
    if (typeof options?.store?.allocate !== 'function') {
      throw new InvalidArgumentError(`store: expected a SegmentStore, received ${received(options?.store)}`);
    }
    refuseCreateTag(options);
    this.#options = options;
  }

  /**
   * The Segments of `tag`, created on first use.
   * @throws (rejects) InvalidTagError before any store call; what Segments.create rejects with.
   */
  get(tag: string): Promise<Segments> {
    checkTag(tag);
    let segments = this.#byTag.get(tag);
    if (!segments) {
      segments = Segments.create({ ...this.#options, tag });
      this.#byTag.set(tag, segments);
      segments.catch(() => this.#byTag.delete(tag));
    }
    return segments;
  }

  /** The next ID of `tag` (see Segments.nextId). */
  async nextId(tag: string): Promise<bigint> {
    return (await this.get(tag)).nextId();
  }

  /** The next `count` IDs of `tag` (see Segments.nextIds). */
  async nextIds(tag: string, count: number): Promise<bigint[]> {
    return (await this.get(tag)).nextIds(count);
  }

  /** The tags served so far. */
  get tags(): string[] {
    return [...this.#byTag.keys()];
  }

  /** Closes every tag's Segments (the store stays open: close it after). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const all = [...this.#byTag.values()];
    this.#byTag.clear();
    await Promise.all(all.map((p) => p.then((s) => s.close()).catch(() => undefined)));
  }
}
