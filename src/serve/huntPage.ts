import { createHash } from 'node:crypto';

/**
 * The hunting page served at `/` by sandtrail serve: one HTML file, no build step, reading the
 * same /api/v3/sandtrail/ endpoints a script would. Views are addressed by the URL fragment
 * (#/pivot/KIND/VALUE, #/related/ID, #/file/HASH), so every click is a link that can be shared.
 */
export const HUNT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandtrail hunt</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
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
<main id="view"><p>Type a behash, sigma rule id, JA3/JA3S, dropped-file SHA-256, a file hash or a behaviour id.</p></main>
<script>
const $ = (s) => document.querySelector(s);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
// what a report's author could hide or reorder with: controls, bidi overrides, zero-width characters
const INVISIBLE = /[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2069\\ufeff]/g;
const MAX_SHOWN = 300;
// a value as text that cannot lie: isolated from its neighbours (bdi), invisible characters shown as
// marked escapes, cut past MAX_SHOWN characters (links and requests keep the exact value)
const show = (s) => {
  const t = String(s ?? '');
  const shown = esc(t.length > MAX_SHOWN ? t.slice(0, MAX_SHOWN) : t).replace(INVISIBLE, (c) => {
    const u = c.charCodeAt(0).toString(16).padStart(4, '0');
    return '<span class="ctl" title="U+' + u.toUpperCase() + '">\\\\u' + u + '</span>';
  });
  return '<bdi>' + shown + (t.length > MAX_SHOWN ? '<span class="more">… ' + (t.length - MAX_SHOWN) + ' more characters</span>' : '') + '</bdi>';
};
const day = (t) => (t ? new Date(t * 1000).toISOString().slice(0, 16).replace('T', ' ') : '-');
const link = (hash, text, cls) => '<a href="#' + esc(hash) + '"' + (cls ? ' data-testid="' + cls + '"' : '') + '>' + show(text) + '</a>';
const pivotLink = (kind, value) => link('/pivot/' + kind + '/' + encodeURIComponent(value), value, 'pivot-link');
$('#key').value = sessionStorage.getItem('sandtrail-key') || '';
$('#key').addEventListener('change', () => sessionStorage.setItem('sandtrail-key', $('#key').value));
async function api(path) {
  const headers = $('#key').value ? { 'x-apikey': $('#key').value } : {};
  // relative: the page works behind a proxy that serves it under a path (serve.publicUrl)
  const r = await fetch('api/v3/sandtrail/' + path, { headers });
  const body = await r.json();
  if (!r.ok) throw new Error((body.error && body.error.code + ': ' + body.error.message) || r.status);
  return body;
}
const counts = (list) => (list || []).map((x) => show(x.name) + ' ' + x.count).join(', ') || '-';
function behaviours(rows, extra) {
  return '<table data-testid="behaviours"><tr><th>behaviour</th><th>sandbox</th><th>verdicts</th><th>analysed</th><th>file</th>' + (extra ? '<th>shared</th>' : '') + '</tr>' +
    rows.map((b) => '<tr><td>' + link('/related/' + encodeURIComponent(b.id), b.id, 'behaviour-link') + '</td><td>' + show(b.sandbox_name) + '</td><td>' + (b.verdicts || []).map(show).join(' ') +
      '</td><td>' + day(b.analysis_date) + '</td><td>' + link('/file/' + b.sha256, b.sha256.slice(0, 16) + '…', 'file-link') + '</td>' +
      (extra ? '<td>' + (b.shared || []).map((s) => show(s.kind) + ' ' + pivotLink(s.kind, s.value)).join('<br>') + '</td>' : '') + '</tr>').join('') + '</table>';
}
async function showPivot(kind, value) {
  // by query, not path: '.', '..' and values longer than a path segment are reachable too
  const { data } = await api('pivots/' + encodeURIComponent(kind) + '?value=' + encodeURIComponent(value) + '&limit=40');
  const s = data.attributes;
  return '<h2 data-testid="title">' + show(kind) + ' <span data-testid="title-value">' + show(value) + '</span>' +
    ' <button type="button" class="copy" data-testid="copy" data-value="' + esc(value) + '">copy</button></h2><div class="figures">' +
    '<span>behaviours <b data-testid="behaviour-count">' + s.behaviours + '</b></span><span>files <b>' + s.files + '</b></span>' +
    '<span>first seen ' + day(s.firstSeen) + '</span><span>last seen ' + day(s.lastSeen) + '</span></div>' +
    '<p>sandboxes: ' + counts(s.sandboxes) + '<br>verdicts: ' + counts(s.verdicts) + '</p><h2>newest</h2>' + behaviours(s.newest);
}
async function showRelated(id) {
  const { data } = await api('related/' + encodeURIComponent(id));
  const r = data.attributes;
  return '<h2 data-testid="title">related to ' + show(id) + ' ' + link('/file/' + id.split('_')[0], '(file roll-up)', 'file-link') + '</h2>' +
    '<table data-testid="values"><tr><th>pivot</th><th>value</th><th>other behaviours</th></tr>' +
    r.values.map((v) => '<tr><td>' + show(v.kind) + '</td><td>' + pivotLink(v.kind, v.value) + '</td><td>' + v.others + '</td></tr>').join('') +
    '</table><h2>behaviours sharing the most values</h2>' + behaviours(r.related, true);
}
async function showFile(hash) {
  const { data } = await api('files/' + encodeURIComponent(hash));
  const f = data.attributes;
  const seen = (title, kind, list) => !(list && list.length) ? '<h2>' + title + '</h2><p>none</p>' : '<h2>' + title + '</h2><table><tr><th>value</th><th>seen by</th></tr>' +
    (list || []).map((v) => '<tr><td>' + (kind ? pivotLink(kind, v.value) : show(v.value)) + (v.title ? ' ' + show(v.title) : '') + (v.level ? ' [' + show(v.level) + ']' : '') + '</td><td>' + v.sandboxes.map(show).join(', ') + '</td></tr>').join('') + '</table>';
  return '<h2 data-testid="title">file ' + show(f.sha256) + '</h2><p>md5 ' + show(f.md5 || '-') + ' · sha1 ' + show(f.sha1 || '-') + '</p>' +
    '<table data-testid="reports"><tr><th>report</th><th>sandbox</th><th>verdicts</th><th>behash</th><th>analysed</th></tr>' +
    f.reports.map((r) => '<tr><td>' + link('/related/' + encodeURIComponent(r.id), r.id, 'behaviour-link') + '</td><td>' + show(r.sandbox_name) + '</td><td>' + (r.verdicts || []).map(show).join(' ') +
      '</td><td>' + (r.behash ? pivotLink('behash', r.behash) : '-') + '</td><td>' + day(r.analysis_date) + '</td></tr>').join('') + '</table>' +
    seen('sigma rules', 'sigma_rule_id', f.sigma) + seen('JA3', 'ja3', f.ja3) + seen('JA3S', 'ja3s', f.ja3s) + seen('dropped files', 'dropped_sha256', f.dropped_sha256) +
    seen('MITRE techniques', null, f.mitre_techniques) + seen('hosts', null, f.hosts) + seen('IPs', null, f.ips);
}
async function route() {
  const parts = location.hash.replace(/^#\\//, '').split('/');
  const view = $('#view');
  if (!parts[0]) return;
  try {
    view.innerHTML = '<p>…</p>';
    if (parts[0] === 'pivot') view.innerHTML = await showPivot(parts[1], decodeURIComponent(parts.slice(2).join('/')));
    else if (parts[0] === 'related') view.innerHTML = await showRelated(decodeURIComponent(parts.slice(1).join('/')));
    else if (parts[0] === 'file') view.innerHTML = await showFile(decodeURIComponent(parts[1]));
  } catch (e) {
    view.innerHTML = '<p class="err" data-testid="error">' + show(e.message) + '</p>';
  }
}
$('#search').addEventListener('submit', (e) => {
  e.preventDefault();
  const kind = $('#kind').value;
  const value = $('#value').value.trim();
  if (!value) return;
  location.hash = kind === 'file' ? '/file/' + value : kind === 'related' ? '/related/' + encodeURIComponent(value) : '/pivot/' + kind + '/' + encodeURIComponent(value);
});
// the exact value, whatever the page shows of it
$('#view').addEventListener('click', (e) => {
  const b = e.target.closest('button.copy');
  if (b && navigator.clipboard) navigator.clipboard.writeText(b.dataset.value).then(() => (b.textContent = 'copied'), () => (b.textContent = 'copy refused'));
});
window.addEventListener('hashchange', route);
route();
</script></body></html>
`;

/** The SHA-256 CSP source of the page's inline element `tag` (its text exactly as served). */
function inlineHash(tag: 'script' | 'style'): string {
  const body = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(HUNT_PAGE)?.[1] ?? '';
  return `'sha256-${createHash('sha256').update(body, 'utf8').digest('base64')}'`;
}

/**
 * The page's Content-Security-Policy: its own inline script and style by hash and nothing else,
 * requests to its own origin only, never framed. A value a report planted in the page can neither
 * run nor load anything.
 */
export const HUNT_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${inlineHash('script')}`,
  `style-src ${inlineHash('style')}`,
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The policy of every other answer (JSON, errors): nothing to run or load, never framed. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";
