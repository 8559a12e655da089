/** The embedded SQLite backend: one file holds documents, dead letters and the batch log. */
export { fileIdentity, openSqliteStore } from './openSqliteStore.js';
export type { SqliteStoreOptions } from './openSqliteStore.js';
export { SqliteSink } from './SqliteSink.js';
export { SqliteHuntReader } from './SqliteHuntReader.js';
export { SqliteDeadLetterStore } from './SqliteDeadLetterStore.js';
export { SqliteBatchLog } from './SqliteBatchLog.js';
export { SqlitePrivateFileStore } from './SqlitePrivateFileStore.js';
export { SqliteArtefactLog } from './SqliteArtefactLog.js';
export { SqliteWatchStore } from './SqliteWatchStore.js';
export { SqliteCollectionStore } from './SqliteCollectionStore.js';
export { writeWhenFree } from './writeWhenFree.js';
export { isTransientSqlite, isBusy, sqliteStoreFault } from './sqliteErrors.js';
export { demoStoreFile, markDemoStore } from './demoStore.js';
export type { DemoStoreFile } from './demoStore.js';
export { removeReadSideFiles, sideFilesAbsent } from './readSideFiles.js';
export { checkStoreFile } from './openForReads.js';
