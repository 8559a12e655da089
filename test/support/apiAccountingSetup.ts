import { afterEach } from 'vitest';
import { checkApiAccounting } from './apiAccounting.js';

// Every test ends with the API accounting check: the requests each fake GTI answered, the quota
// ledger and the run summaries agree (see accountApi).
afterEach(async (ctx) => {
  await checkApiAccounting(ctx.task.result?.state === 'fail');
});
