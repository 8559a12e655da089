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
const KIND_NAMES = { behash: 'behash', sigma_rule_id: 'sigma rule', ja3: 'JA3', ja3s: 'JA3S', dropped_sha256: 'dropped SHA-256', sha256: 'file SHA-256' };
// a duration in the largest unit that keeps it readable
const ago = (s) => (s === null || s === undefined ? '-' : s < 120 ? s + ' s' : s < 7200 ? Math.round(s / 60) + ' min' : s < 172800 ? Math.round(s / 3600) + ' h' : Math.round(s / 86400) + ' d');
// a count as a bar: <meter> draws it without a style attribute, which the page's CSP would refuse
const bars = (list, testid) => {
  const max = Math.max(1, ...(list || []).map((x) => x.count));
  return '<table class="bars" data-testid="' + testid + '">' + (list || []).map((x) => '<tr><td>' + show(x.name) + '</td><td><meter min="0" max="' + max + '" value="' + x.count + '"></meter></td><td class="n">' + x.count + '</td></tr>').join('') + '</table>';
};
// what the view drew needs the page: run once its HTML is in place (the timeline's chart)
let after = null;
// the key the view on show was asked with
let viewKey = null;
$('#key').value = sessionStorage.getItem('sandtrail-key') || '';
$('#key').addEventListener('change', () => {
  sessionStorage.setItem('sandtrail-key', $('#key').value);
  // the landing view asked with another key (none, when the page opened): ask again with this one.
  // Only then: a change also fires when the field loses focus, on the click of a link in the view
  if (!location.hash.replace(/^#\\/?/, '') && $('#key').value !== viewKey) route();
});
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
async function drawTimeline(kind, value) {
  const { data } = await api('timeline/' + encodeURIComponent(kind) + '?value=' + encodeURIComponent(value));
  const t = data.attributes;
  const el = $('#timeline');
  if (!el) return;
  const total = t.counts.reduce((n, c) => n + c.count, 0);
  el.dataset.total = String(total);
  el.dataset.undated = String(t.undated);
  el.dataset.buckets = String(t.counts.length);
  $('#timeline-caption').textContent = 'per ' + (t.bucketSeconds === 3600 ? 'hour' : 'day') + ' of analysis: ' + total + ' behaviours' + (t.undated ? ', ' + t.undated + ' without an analysis date' : '');
  if (t.counts.length === 0 || typeof uPlot === 'undefined') return;
  // every bucket from the first to the last, empty ones as zeros (past 2,000 buckets, those holding behaviours)
  const xs = [];
  const ys = [];
  const byT = new Map(t.counts.map((c) => [c.t, c.count]));
  const first = t.counts[0].t;
  const last = t.counts[t.counts.length - 1].t;
  if ((last - first) / t.bucketSeconds <= 2000) for (let x = first; x <= last; x += t.bucketSeconds) { xs.push(x); ys.push(byT.get(x) || 0); }
  else for (const c of t.counts) { xs.push(c.t); ys.push(c.count); }
  new uPlot({
    width: Math.max(320, Math.min(1100, el.clientWidth || 900)),
    height: 220,
    // UTC, as every date of the page; counts from zero
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
    legend: { show: false },
    series: [{}, { label: 'behaviours', stroke: '#0b5cad', fill: 'rgba(11,92,173,0.3)', paths: uPlot.paths.bars({ size: [0.9, 48] }), points: { show: false } }],
  }, [xs, ys], el);
}
// the other kinds' values the value's behaviours carry, ranked (read after the page is shown: on a
// large value the store counts a while)
async function drawCooccurring(kind, value) {
  const { data } = await api('cooccurring/' + encodeURIComponent(kind) + '?value=' + encodeURIComponent(value) + '&limit=10');
  const el = $('#cooccurring');
  if (!el) return;
  const byKind = new Map();
  for (const v of data.attributes.values) byKind.set(v.kind, (byKind.get(v.kind) || []).concat([v]));
  el.innerHTML = byKind.size === 0 ? '<p>none</p>' : [...byKind.entries()].map(([k, list]) => {
    const max = Math.max(1, ...list.map((v) => v.behaviours));
    return '<div><h3>' + show(KIND_NAMES[k] || k) + '</h3><table class="bars" data-testid="cooccurring-' + k + '">' +
      list.map((v) => '<tr><td>' + pivotLink(k, v.value) + '</td><td><meter min="0" max="' + max + '" value="' + v.behaviours + '"></meter></td><td class="n">' + v.behaviours + '</td></tr>').join('') + '</table></div>';
  }).join('');
}
async function showPivot(kind, value) {
  after = () => Promise.all([drawTimeline(kind, value), drawCooccurring(kind, value)]);
  // by query, not path: '.', '..' and values longer than a path segment are reachable too
  const { data } = await api('pivots/' + encodeURIComponent(kind) + '?value=' + encodeURIComponent(value) + '&limit=40');
  const s = data.attributes;
  return '<h2 data-testid="title">' + show(kind) + ' <span data-testid="title-value">' + show(value) + '</span>' +
    ' <button type="button" class="copy" data-testid="copy" data-value="' + esc(value) + '">copy</button></h2><div class="figures">' +
    '<span>behaviours <b data-testid="behaviour-count">' + s.behaviours + '</b></span><span>files <b>' + s.files + '</b></span>' +
    '<span>first seen ' + day(s.firstSeen) + '</span><span>last seen ' + day(s.lastSeen) + '</span></div>' +
    '<h2>over time <small id="timeline-caption" data-testid="timeline-caption"></small></h2><div id="timeline" data-testid="timeline"></div>' +
    '<div class="split"><div><h2>by sandbox</h2>' + bars(s.sandboxes, 'sandboxes') + '</div><div><h2>by verdict</h2>' + bars(s.verdicts, 'verdicts') + '</div></div>' +
    '<h2>carried with it <small>(the values of the other kinds its behaviours hold, with how many)</small></h2><div id="cooccurring" class="split" data-testid="cooccurring"><p>…</p></div>' +
    '<h2>newest</h2>' + behaviours(s.newest);
}
const WINDOWS = [[3600, '1 h'], [86400, '24 h'], [604800, '7 d'], [2592000, '30 d']];
async function showLanding(windowSeconds) {
  const { data } = await api('overview?window=' + windowSeconds);
  const o = data.attributes;
  const values = (rows, testid) => !rows.length ? '<p>none</p>' : '<table data-testid="' + testid + '"><tr><th>value</th><th>behaviours</th><th>files</th><th>first seen</th><th>last seen</th></tr>' +
    rows.map((v) => '<tr><td>' + pivotLink(v.kind, v.value) + '</td><td class="n">' + v.behaviours + '</td><td class="n">' + v.files + '</td><td>' + day(v.firstSeen) + '</td><td>' + day(v.lastSeen) + '</td></tr>').join('') + '</table>';
  const minutes = (list) => list.length ? ' (' + list.slice(0, 5).map(show).join(', ') + (list.length > 5 ? ', …' : '') + ')' : '';
  return '<h2 data-testid="title">the store</h2><div class="figures" data-testid="store-figures">' +
    '<span>behaviours <b data-testid="store-behaviours">' + o.store.behaviours + '</b></span>' +
    '<span>last modified from ' + day(o.store.oldestModified) + ' to ' + day(o.store.newestModified) + '</span>' +
    '<span>ingested through <b data-testid="done-through">' + show(o.freshness.doneThrough || '-') + '</b></span>' +
    '<span>lag <b data-testid="lag">' + ago(o.freshness.lagSeconds) + '</b></span>' +
    '<span>failed minutes, last day <b data-testid="failed">' + o.freshness.failed.length + '</b>' + minutes(o.freshness.failed) + '</span>' +
    '<span>missing minutes, last day <b data-testid="missing">' + o.freshness.missing.length + '</b>' + minutes(o.freshness.missing) + '</span></div>' +
    '<p class="windows">new and growing in the last ' + WINDOWS.map(([w, name]) => w === o.window.seconds ? '<b>' + name + '</b>' : link('/new/' + w, name, 'window')).join(' · ') + '</p>' +
    o.kinds.map((k) => '<div class="kind" data-testid="kind-' + k.kind + '"><h2>' + show(KIND_NAMES[k.kind] || k.kind) + '</h2><div class="split"><div><h3>first seen in the window</h3>' + values(k.new, 'new-' + k.kind) +
      '</div><div><h3>most behaviours in the window</h3>' + values(k.grew, 'grew-' + k.kind) + '</div></div></div>').join('') +
    '<h2>watchlist hits</h2>' + (!o.watchHits.length ? '<p>none</p>' : '<table data-testid="watch-hits"><tr><th>watch</th><th>behaviour</th><th>matched</th><th>recorded</th></tr>' +
      o.watchHits.map((h) => '<tr><td>' + show(h.watch) + '</td><td>' + link('/related/' + encodeURIComponent(h.behaviourId), h.behaviourId, 'behaviour-link') + '</td><td>' +
        h.matched.map((m) => show(KIND_NAMES[m.kind] || m.kind) + ' ' + pivotLink(m.kind, m.value)).join('<br>') + '</td><td>' + day(Math.floor(h.at / 1000)) + '</td></tr>').join('') + '</table>') +
    '<h2>dead letters</h2><p>held: <b data-testid="dead-letters">' + o.deadLetters.total + '</b>; written in the last day: ' +
    (o.deadLetters.lastDay.length ? o.deadLetters.lastDay.map((c) => show(c.code) + ' ' + c.count).join(', ') : 'none') + ' (<code>sandtrail dlq list</code>)</p>';
}
async function showRelated(id) {
  const { data } = await api('related/' + encodeURIComponent(id));
  const r = data.attributes;
  return '<h2 data-testid="title">related to ' + show(id) + ' ' + link('/file/' + id.split('_')[0], '(file roll-up)', 'file-link') + '</h2>' +
    '<table data-testid="values"><tr><th>pivot</th><th>value</th><th>other behaviours</th></tr>' +
    r.values.map((v) => '<tr><td>' + show(v.kind) + '</td><td>' + pivotLink(v.kind, v.value) + '</td><td>' + v.others + '</td></tr>').join('') +
    '</table><h2>behaviours sharing the most values</h2>' + behaviours(r.related, true);
}
const signatures = (list) => '<h2>signature matches</h2>' + (!(list && list.length) ? '<p>none</p>' : '<table data-testid="signatures"><tr><th>format</th><th>rule</th><th>description</th><th>seen by</th></tr>' +
  list.map((m) => '<tr><td>' + show(m.format || '-') + '</td><td>' + show(m.name) + '</td><td>' + show(m.description || '') + '</td><td>' + m.sandboxes.map(show).join(', ') + '</td></tr>').join('') + '</table>');
async function showFile(hash) {
  const { data } = await api('files/' + encodeURIComponent(hash));
  const f = data.attributes;
  const seen = (title, kind, list) => !(list && list.length) ? '<h2>' + title + '</h2><p>none</p>' : '<h2>' + title + '</h2><table><tr><th>value</th><th>seen by</th></tr>' +
    (list || []).map((v) => '<tr><td>' + (kind ? pivotLink(kind, v.value) : show(v.value)) + (v.title ? ' ' + show(v.title) : '') + (v.name ? ' ' + show(v.name) : '') + (v.level ? ' [' + show(v.level) + ']' : '') + '</td><td>' + v.sandboxes.map(show).join(', ') + '</td></tr>').join('') + '</table>';
  return '<h2 data-testid="title">file ' + show(f.sha256) + '</h2><p>md5 ' + show(f.md5 || '-') + ' · sha1 ' + show(f.sha1 || '-') + '</p>' +
    '<table data-testid="reports"><tr><th>report</th><th>sandbox</th><th>verdicts</th><th>behash</th><th>analysed</th></tr>' +
    f.reports.map((r) => '<tr><td>' + link('/related/' + encodeURIComponent(r.id), r.id, 'behaviour-link') + '</td><td>' + show(r.sandbox_name) + '</td><td>' + (r.verdicts || []).map(show).join(' ') +
      '</td><td>' + (r.behash ? pivotLink('behash', r.behash) : '-') + '</td><td>' + day(r.analysis_date) + '</td></tr>').join('') + '</table>' +
    seen('sigma rules', 'sigma_rule_id', f.sigma) + seen('JA3', 'ja3', f.ja3) + seen('JA3S', 'ja3s', f.ja3s) + seen('dropped files', 'dropped_sha256', f.dropped_sha256) +
    seen('MITRE ATT&CK techniques', null, f.mitre_techniques) + signatures(f.signatures) + seen('hosts', null, f.hosts) + seen('IPs', null, f.ips);
}
async function route() {
  const parts = location.hash.replace(/^#\\//, '').split('/');
  const view = $('#view');
  after = null;
  viewKey = $('#key').value;
  try {
    view.innerHTML = '<p>…</p>';
    if (!parts[0]) view.innerHTML = await showLanding(86400);
    else if (parts[0] === 'new') view.innerHTML = await showLanding(Number(parts[1]) || 86400);
    else if (parts[0] === 'pivot') view.innerHTML = await showPivot(parts[1], decodeURIComponent(parts.slice(2).join('/')));
    else if (parts[0] === 'related') view.innerHTML = await showRelated(decodeURIComponent(parts.slice(1).join('/')));
    else if (parts[0] === 'file') view.innerHTML = await showFile(decodeURIComponent(parts[1]));
    if (after) await after();
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
