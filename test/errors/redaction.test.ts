import assert from 'node:assert/strict';
import { test } from 'vitest';
import { SandtrailError } from '../../src/errors/index.js';

test("a SandtrailError never carries a URL's password, whichever library's message it quotes", () => {
  const e = new SandtrailError(
    'GTI_NETWORK',
    'GET /x: Request cannot be constructed from a URL that includes credentials: http://proxyuser:BASE@PW_55@127.0.0.1:17771/api/v3/x',
  );
  assert.equal(
    e.message,
    'GET /x: Request cannot be constructed from a URL that includes credentials: http://proxyuser:***@127.0.0.1:17771/api/v3/x',
  );
  assert.equal(
    new SandtrailError('SINK_UNAVAILABLE', 'no password in https://host:9200/x@y').message,
    'no password in https://host:9200/x@y',
  );
});
