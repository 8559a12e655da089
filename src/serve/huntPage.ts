import { createHash } from 'node:crypto';
import { HUNT_SCRIPT } from './huntPageScript.js';

/**
 * The hunting page served at `/` by sandtrail serve: one HTML file, no build step, reading the
 * same /api/v3/sandtrail/ endpoints a script would. Views are addressed by the URL fragment
 * (#/pivot/KIND/VALUE, #/related/ID, #/file/HASH), so every click is a link that can be shared.
 */
export const HUNT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandtrail hunt</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><link rel="stylesheet" href="assets/uplot.css"><script src="assets/uplot.js"></script>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1c2430;background:#f4f6f8}
header{background:#1c2430;color:#fff;padding:10px 18px;display:flex;gap:12px;align-items:center;flex-wrap:wrap}
header b{font-size:16px;margin-right:8px}
input,select,button{font:inherit;padding:4px 8px}
#value{width:36em}
main{padding:14px 18px}
h2{font-size:16px;margin:4px 0 10px}
table{border-collapse:collapse;background:#fff;margin:6px 0 14px;min-width:50%}
td,th{border:1px solid #d6dbe1;padding:3px 8px;text-align:left;vertical-align:top;font-family:ui-monospace,monospace;font-size:12.5px}
th{background:#e9edf1;font-family:system-ui,sans-serif}
a{color:#0b5cad;text-decoration:none}a:hover{text-decoration:underline}
.figures span{display:inline-block;background:#fff;border:1px solid #d6dbe1;padding:4px 10px;margin:0 6px 6px 0}
.err{color:#a40000}
h2,td,p,.figures span{overflow-wrap:anywhere}
td{max-width:48em}
.ctl{color:#a40000;background:#fde8e8;border-radius:2px;font-size:85%}
.more{color:#5b6670;font-style:italic}
.copy{font-size:11px;padding:1px 6px;margin-left:6px}
h3{font-size:14px;margin:6px 0 4px}
small{font-weight:normal;color:#5b6670}
.split{display:flex;gap:24px;flex-wrap:wrap}.split>div{flex:1 1 420px;min-width:0}
.bars{min-width:0}.bars meter{width:220px;height:14px}td.n{text-align:right}
#timeline{background:#fff;border:1px solid #d6dbe1;padding:6px;min-height:40px;max-width:1120px}
.windows a,.windows b{margin:0 4px}
</style></head>
<body>
<header><b>sandtrail hunt</b>
<form id="search"><select id="kind">
<option value="behash">behash</option><option value="sigma_rule_id">sigma rule</option><option value="ja3">JA3</option>
<option value="ja3s">JA3S</option><option value="dropped_sha256">dropped SHA-256</option><option value="sha256">file SHA-256</option>
<option value="file">file roll-up (any hash)</option><option value="related">related (behaviour id)</option>
</select> <input id="value" placeholder="a value to pivot on" autocomplete="off"> <button>Go</button></form>
<label>x-apikey <input id="key" type="password" size="14"></label>
</header>
<main id="view"><p>Type a behash, sigma rule id, JA3/JA3S, dropped-file SHA-256, a file hash or a behaviour id; or wait for what the store holds.</p></main>
<script>
${HUNT_SCRIPT}</script></body></html>
`;

/** The SHA-256 CSP source of the page's inline element `tag` (its text exactly as served). */
function inlineHash(tag: 'script' | 'style'): string {
  const body = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(HUNT_PAGE)?.[1] ?? '';
  return `'sha256-${createHash('sha256').update(body, 'utf8').digest('base64')}'`;
}

/**
 * The page's Content-Security-Policy: its own inline script and style by hash and the charting
 * library it serves itself, nothing else,
 * requests to its own origin only, never framed. A value a report planted in the page can neither
 * run nor load anything.
 */
export const HUNT_PAGE_CSP = [
  "default-src 'none'",
  // 'self': the charting library under /assets/, from the package itself
  `script-src 'self' ${inlineHash('script')}`,
  `style-src 'self' ${inlineHash('style')}`,
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The policy of every other answer (JSON, errors): nothing to run or load, never framed. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";
