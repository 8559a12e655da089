/**
 * TAXII 2.1 served by `sandtrail serve`: what the sharing layer keeps in the store's shared
 * collections (watchlist hits, saved exports), read by SIEMs and TIPs that poll with `added_after`.
 */
export { registerTaxii, isTaxiiUrl, taxiiError, TAXII_PATH, type TaxiiOptions } from './taxiiRoutes.js';
export { WatchSyncer } from './WatchSyncer.js';
export { TAXII_MEDIA_TYPE, STIX_MEDIA_TYPE, parseTimestamp, formatTimestamp } from './taxiiParams.js';
