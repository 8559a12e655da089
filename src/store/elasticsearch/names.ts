/** Every Elasticsearch object sandtrail owns, derived from one prefix so deployments can share a cluster. */
export interface EsNames {
  prefix: string;
  /** Read alias over every behaviour partition (reads go through it; writes name their day index). */
  alias: string;
  /** Every behaviour partition matches this pattern (the index template's). */
  pattern: string;
  /** Day indices are this followed by `yyyy.MM.dd` (the UTC day of a behaviour's last_modification_date). */
  dayPrefix: string;
  /**
   * The undated partition, created by setup with the alias so the alias exists before any day
   * index: the single index of a deployment from before daily partitions, empty on a new one.
   */
  firstIndex: string;
  /** ILM policy of the day indices (retention's delete phase). */
  policy: string;
  indexTemplate: string;
  settingsComponent: string;
  mappingsComponent: string;
  deadLetters: string;
  deadLettersTemplate: string;
  batches: string;
  batchesTemplate: string;
  /** Private file reports: an index of their own, apart from the (public) behaviour reports. */
  privateFiles: string;
  privateFilesTemplate: string;
  /** Downloaded artefacts of behaviour reports: one record per (behaviour, kind), beside the reports. */
  artefacts: string;
  artefactsTemplate: string;
  /** Watchlists: one document per watch, `_id` = its name. */
  watches: string;
  watchesTemplate: string;
  /** Watch hits: one document per (watch, behaviour, version), created once. */
  watchHits: string;
  watchHitsTemplate: string;
  /** Shared (TAXII) collections: one document per collection, `_id` = its UUID. */
  collections: string;
  collectionsTemplate: string;
  /** The objects of the shared collections, each with the date it was added. */
  collectionObjects: string;
  collectionObjectsTemplate: string;
  /** Where each behaviour's copies may be: one entry per behaviour id listing the partitions its versions went to. */
  locator: string;
  locatorTemplate: string;
}

/** Index names are lower-case and cannot hold these characters (nor start with `-`, `_`, `+`). */
const VALID_PREFIX = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * A prefix holding `-behaviours-` (or ending in `-behaviours`) is refused: `acme-behaviours-eu`'s
 * indices would match `acme`'s day-index pattern (`acme-behaviours-*`), under its template, alias
 * and retention.
 */
export function isValidPrefix(prefix: string): boolean {
  return VALID_PREFIX.test(prefix) && prefix.length <= 100 && !/-behaviours(-|$)/.test(prefix);
}

export function esNames(prefix = 'sandtrail'): EsNames {
  if (!isValidPrefix(prefix)) {
    throw new TypeError(
      `invalid Elasticsearch index prefix "${prefix}": lower-case letters, digits, . _ - only, starting with a letter or digit, not holding "-behaviours-"`,
    );
  }
  return {
    prefix,
    alias: `${prefix}-behaviours`,
    pattern: `${prefix}-behaviours-*`,
    dayPrefix: `${prefix}-behaviours-`,
    firstIndex: `${prefix}-behaviours-000001`,
    policy: `${prefix}-behaviours`,
    indexTemplate: `${prefix}-behaviours`,
    settingsComponent: `${prefix}-behaviours-settings`,
    mappingsComponent: `${prefix}-behaviours-mappings`,
    deadLetters: `${prefix}-dead-letters`,
    deadLettersTemplate: `${prefix}-dead-letters`,
    batches: `${prefix}-batches`,
    batchesTemplate: `${prefix}-batches`,
    privateFiles: `${prefix}-private-files`,
    privateFilesTemplate: `${prefix}-private-files`,
    artefacts: `${prefix}-artefacts`,
    artefactsTemplate: `${prefix}-artefacts`,
    watches: `${prefix}-watches`,
    watchesTemplate: `${prefix}-watches`,
    watchHits: `${prefix}-watch-hits`,
    watchHitsTemplate: `${prefix}-watch-hits`,
    collections: `${prefix}-collections`,
    collectionsTemplate: `${prefix}-collections`,
    collectionObjects: `${prefix}-collection-objects`,
    collectionObjectsTemplate: `${prefix}-collection-objects`,
    locator: `${prefix}-locator`,
    locatorTemplate: `${prefix}-locator`,
  };
}
