import { SandtrailError } from '../errors/index.js';

/** Empty pages in a row that still name a next cursor before a listing is taken for a loop. */
const MAX_EMPTY_PAGES = 10;

/**
 * Follows a paged listing's cursors and stops one that would never end: an API answering a cursor
 * it gave before, or page after page of nothing with a cursor still, would be asked (and paid)
 * for ever. Such an answer is GTI_BAD_RESPONSE, not retried by a job.
 */
export class PagingGuard {
  private readonly seen = new Set<string>();
  private empty = 0;

  constructor(private readonly what: string) {}

  /** The cursor to ask next (null at the end), after a page of `items` that named `cursor`. */
  next(cursor: string | null, items: number): string | null {
    if (cursor === null) return null;
    if (this.seen.has(cursor)) {
      throw new SandtrailError('GTI_BAD_RESPONSE', `${this.what}: the API named a cursor it gave before: paging stopped (a loop)`);
    }
    this.empty = items === 0 ? this.empty + 1 : 0;
    if (this.empty >= MAX_EMPTY_PAGES) {
      throw new SandtrailError(
        'GTI_BAD_RESPONSE',
        `${this.what}: ${MAX_EMPTY_PAGES} empty pages in a row, each naming a next cursor: paging stopped`,
      );
    }
    this.seen.add(cursor);
    return cursor;
  }
}
