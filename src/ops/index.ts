export { startOpsServer } from './OpsServer.js';
export type { OpsServer, OpsServerOptions, Readiness } from './OpsServer.js';
export { assertSafeBinding, authorized, isLoopback, loopbackHostHeader, sameSecret } from './checkAccess.js';
export type { OpsCredentials } from './checkAccess.js';
export { sharedStateReader } from './sharedState.js';
export { answerRaw, clientErrorStatus } from './answerRaw.js';
export { FailedAuth } from './FailedAuth.js';
