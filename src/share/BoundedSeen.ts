/**
 * The ids an export has written lately, at most `cap` of them (least recently seen forgotten
 * first): memory stays bounded however large the export, and an object seen again after being
 * forgotten is written again, with the same id and content (harmless to a consumer).
 */
export class BoundedSeen {
  private readonly ids = new Map<string, true>();
  constructor(private readonly cap = 200_000) {}

  /** True the first time `id` is offered while remembered; false while it is remembered. */
  add(id: string): boolean {
    if (this.ids.has(id)) {
      // most recently seen last: a value shared by many reports stays remembered
      this.ids.delete(id);
      this.ids.set(id, true);
      return false;
    }
    this.ids.set(id, true);
    if (this.ids.size > this.cap) this.ids.delete(this.ids.keys().next().value as string);
    return true;
  }
}
