/**
 * The ids an export has written lately, at most `cap` of them, the least recently seen forgotten
 * first (by halves): memory stays bounded however large the export, and an object seen again after
 * being forgotten is written again, with the same id and content (harmless to a consumer). Two
 * generations of sets rather than one map kept in recency order: a map's oldest entry is found by
 * iterating past the slots its deletions left, which made each forgetting slower as an export grew.
 */
export class BoundedSeen {
  private current = new Set<string>();
  private previous = new Set<string>();
  constructor(private readonly cap = 200_000) {}

  /** True the first time `id` is offered while remembered; false while it is remembered. */
  add(id: string): boolean {
    if (this.current.has(id)) return false;
    // seen in the older half: remembered again as recent (a value shared by many reports stays)
    const known = this.previous.delete(id);
    this.current.add(id);
    if (this.current.size >= Math.max(1, Math.floor(this.cap / 2))) {
      this.previous = this.current;
      this.current = new Set();
    }
    return !known;
  }
}
