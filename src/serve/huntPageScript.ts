/**
 * The hunting page's script, inlined in the page (its CSP names it by hash): views addressed by
 * the URL fragment, each a read of the /api/v3/sandtrail/ endpoints a script would make, every
 * stored value shown through `show` (isolated, invisible characters marked, cut when long).
 */
export const HUNT_SCRIPT = `const $ = (s) => document.querySelector(s);
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
`;
