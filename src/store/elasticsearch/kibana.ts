/**
 * Kibana saved objects for hunters: a data view on the behaviours alias whose pivot fields link
 * to a pivot search, one saved search per pivot, a dashboard of the clusters a hunt starts
 * from, a data view and saved search of the private file reports (their own index), and a data
 * view of the downloaded artefacts (their own index too).
 * `kibanaNdjson()` generates `kibana/sandtrail.ndjson` (a test keeps the file in sync);
 * `importKibanaObjects` (importKibana.ts) loads it through the saved objects import API.
 */
import { esNames } from './names.js';
import { CORE_VERSION, pivotLink, savedObject as obj, searchSource, type SavedObject } from './kibanaSavedObject.js';
import { lagLine, perSandboxHistogram, termsTable } from './kibanaVisualizations.js';

interface PivotSpec {
  key: string;
  field: string;
  title: string;
  /** Extra fields shown as columns of the pivot's saved search. */
  columns: string[];
}

const PIVOTS: readonly PivotSpec[] = [
  { key: 'behash', field: 'pivots.behash', title: 'behash cluster', columns: ['pivots.behash'] },
  { key: 'sigma', field: 'pivots.sigma_rule_ids', title: 'Sigma rule', columns: ['pivots.sigma_rule_ids'] },
  { key: 'ja3', field: 'pivots.ja3', title: 'JA3 client fingerprint', columns: ['pivots.ja3', 'tls.client.server_name'] },
  { key: 'ja3s', field: 'pivots.ja3s', title: 'JA3S server fingerprint', columns: ['pivots.ja3s'] },
  { key: 'dropped', field: 'pivots.dropped_sha256', title: 'dropped file SHA-256', columns: ['pivots.dropped_sha256'] },
  { key: 'sha256', field: 'file.hash.sha256', title: 'sample SHA-256', columns: ['file.hash.md5', 'file.hash.sha1'] },
];

/** Other identifiers rendered as pivot links (they open the generic search with a term query). */
const EXTRA_LINK_FIELDS = [
  'sha256',
  'file.hash.md5',
  'file.hash.sha1',
  'tls.client.ja3',
  'tls.server.ja3s',
  'threat.technique.id',
  'rule.id',
  'dns.question.name',
  'destination.ip',
  'related.hash',
  'related.ip',
  'related.hosts',
  'attributes.sigma_analysis_results.rule_id',
  'attributes.ids_alerts.rule_id',
  'attributes.files_dropped.sha256',
];

const BASE_COLUMNS = ['sandbox_name', 'sha256', 'attributes.verdicts'];

/** Every saved object, for the indices of `prefix`. */
export function kibanaObjects(prefix = 'sandtrail'): SavedObject[] {
  const n = esNames(prefix);
  const dataViewId = `${prefix}-behaviours`;
  const dvRef = [{ id: dataViewId, name: 'kibanaSavedObjectMeta.searchSourceJSON.index', type: 'index-pattern' }];
  const searchId = (key: string): string => `${prefix}-pivot-${key}`;

  const formats: Record<string, unknown> = {};
  for (const p of PIVOTS) formats[p.field] = pivotLink(searchId(p.key), p.field);
  for (const f of EXTRA_LINK_FIELDS) formats[f] = pivotLink(searchId('any'), f);

  const objects: SavedObject[] = [
    obj('index-pattern', dataViewId, {
      title: n.alias,
      name: `${prefix} behaviours`,
      timeFieldName: '@timestamp',
      fieldFormatMap: JSON.stringify(formats),
      fieldAttrs: JSON.stringify({
        'pivots.behash': { customLabel: 'behash' },
        'pivots.sigma_rule_ids': { customLabel: 'Sigma rule id' },
        'pivots.ja3': { customLabel: 'JA3' },
        'pivots.ja3s': { customLabel: 'JA3S' },
        'pivots.dropped_sha256': { customLabel: 'Dropped file SHA-256' },
      }),
      // the raw process tree and sigma match context are noise in a document table
      sourceFilters: JSON.stringify([{ value: 'attributes.processes_tree' }, { value: 'attributes.sigma_analysis_results.match_context' }]),
      runtimeFieldMap: '{}',
      allowNoIndex: true,
    }),
    obj(
      'search',
      searchId('any'),
      {
        title: `[${prefix}] Pivot search`,
        description: 'Every behaviour report; pivot links open it with a term query on the clicked value.',
        columns: [...BASE_COLUMNS, 'pivots.behash'],
        sort: [['@timestamp', 'desc']],
        kibanaSavedObjectMeta: { searchSourceJSON: searchSource('') },
      },
      dvRef,
    ),
  ];
  for (const p of PIVOTS) {
    objects.push(
      obj(
        'search',
        searchId(p.key),
        {
          title: `[${prefix}] Pivot: ${p.title}`,
          description: `Behaviour reports that have a ${p.title}; click a value to see every report sharing it.`,
          columns: [...BASE_COLUMNS, ...p.columns],
          sort: [['@timestamp', 'desc']],
          kibanaSavedObjectMeta: { searchSourceJSON: searchSource(`${p.field}:*`) },
        },
        dvRef,
      ),
    );
  }

  const vis = [
    { key: 'top-behash', title: 'Top behash clusters', field: 'pivots.behash', size: 20 },
    { key: 'top-ja3', title: 'Top JA3', field: 'pivots.ja3', size: 15 },
    { key: 'top-ja3s', title: 'Top JA3S', field: 'pivots.ja3s', size: 15 },
    { key: 'top-sigma', title: 'Top sigma rules', field: 'pivots.sigma_rule_ids', size: 20 },
    { key: 'top-dropped', title: 'Top dropped files', field: 'pivots.dropped_sha256', size: 20 },
  ];
  for (const v of vis) {
    objects.push(
      obj(
        'visualization',
        `${prefix}-vis-${v.key}`,
        {
          title: `[${prefix}] ${v.title}`,
          description: '',
          uiStateJSON: '{}',
          version: 1,
          visState: termsTable(v.title, v.field, v.size),
          kibanaSavedObjectMeta: { searchSourceJSON: searchSource('') },
        },
        dvRef,
      ),
    );
  }
  const batchesViewId = `${prefix}-batches`;
  objects.push(
    obj('index-pattern', batchesViewId, {
      title: n.batches,
      name: `${prefix} feed batches`,
      timeFieldName: '@timestamp',
      fieldFormatMap: '{}',
      fieldAttrs: JSON.stringify({ lag_seconds: { customLabel: 'Ingestion lag (s)' } }),
      runtimeFieldMap: '{}',
      allowNoIndex: true,
    }),
  );
  objects.push(...privateFileObjects(prefix, n.privateFiles, searchId));
  objects.push(artefactView(prefix, n.artefacts, searchId));
  const lagId = `${prefix}-vis-ingestion-lag`;
  objects.push(
    obj(
      'visualization',
      lagId,
      {
        title: `[${prefix}] Ingestion lag`,
        description: 'Seconds between the end of each feed minute and the moment its batch was indexed (max per interval).',
        uiStateJSON: '{}',
        version: 1,
        visState: lagLine('Ingestion lag (s)'),
        kibanaSavedObjectMeta: { searchSourceJSON: searchSource('') },
      },
      [{ id: batchesViewId, name: 'kibanaSavedObjectMeta.searchSourceJSON.index', type: 'index-pattern' }],
    ),
  );
  const timelineId = `${prefix}-vis-per-sandbox`;
  objects.push(
    obj(
      'visualization',
      timelineId,
      {
        title: `[${prefix}] Behaviours per sandbox over time`,
        description: '',
        uiStateJSON: '{}',
        version: 1,
        visState: perSandboxHistogram('Behaviours per sandbox over time'),
        kibanaSavedObjectMeta: { searchSourceJSON: searchSource('') },
      },
      dvRef,
    ),
  );

  const layout: { id: string; type: 'visualization' | 'search'; x: number; y: number; w: number; h: number }[] = [
    { id: timelineId, type: 'visualization', x: 0, y: 0, w: 32, h: 12 },
    { id: lagId, type: 'visualization', x: 32, y: 0, w: 16, h: 12 },
    { id: `${prefix}-vis-top-behash`, type: 'visualization', x: 0, y: 12, w: 24, h: 16 },
    { id: `${prefix}-vis-top-sigma`, type: 'visualization', x: 24, y: 12, w: 24, h: 16 },
    { id: `${prefix}-vis-top-ja3`, type: 'visualization', x: 0, y: 28, w: 16, h: 15 },
    { id: `${prefix}-vis-top-ja3s`, type: 'visualization', x: 16, y: 28, w: 16, h: 15 },
    { id: `${prefix}-vis-top-dropped`, type: 'visualization', x: 32, y: 28, w: 16, h: 15 },
    { id: searchId('any'), type: 'search', x: 0, y: 43, w: 48, h: 20 },
  ];
  const panels = layout.map((p, k) => ({
    version: CORE_VERSION,
    type: p.type,
    gridData: { x: p.x, y: p.y, w: p.w, h: p.h, i: String(k + 1) },
    panelIndex: String(k + 1),
    embeddableConfig: { enhancements: {} },
    panelRefName: `panel_${k + 1}`,
  }));
  objects.push(
    obj(
      'dashboard',
      `${prefix}-hunting`,
      {
        title: `[${prefix}] Behaviour hunting`,
        description: 'Clusters to start a hunt from: behash, sigma rules, JA3/JA3S, dropped files; reports per sandbox and ingestion lag.',
        panelsJSON: JSON.stringify(panels),
        optionsJSON: JSON.stringify({ useMargins: true, syncColors: false, syncCursor: true, syncTooltips: false, hidePanelTitles: false }),
        timeRestore: true,
        timeFrom: 'now-7d',
        timeTo: 'now',
        refreshInterval: { pause: true, value: 60000 },
        version: 1,
        kibanaSavedObjectMeta: { searchSourceJSON: JSON.stringify({ query: { query: '', language: 'kuery' }, filter: [] }) },
      },
      layout.map((p, k) => ({ id: p.id, name: `panel_${k + 1}`, type: p.type })),
    ),
  );
  return objects;
}

/**
 * The private files' own data view (time field `fetched_at`) and saved search. Hash fields link
 * to the behaviour reports of the same file; vhash links to the private files sharing it.
 */
function privateFileObjects(prefix: string, index: string, searchId: (key: string) => string): SavedObject[] {
  const viewId = `${prefix}-private-files`;
  const listId = `${prefix}-private-files-search`;
  const formats = {
    sha256: pivotLink(searchId('sha256'), 'file.hash.sha256'),
    sha1: pivotLink(searchId('any'), 'file.hash.sha1'),
    md5: pivotLink(searchId('any'), 'file.hash.md5'),
    vhash: pivotLink(listId, 'vhash'),
  };
  const view = obj('index-pattern', viewId, {
    title: index,
    name: `${prefix} private files`,
    timeFieldName: 'fetched_at',
    fieldFormatMap: JSON.stringify(formats),
    fieldAttrs: JSON.stringify({ fetched_at: { customLabel: 'Fetched' } }),
    // `attributes` repeats the top-level fields (plus unknown ones): noise in a document table
    sourceFilters: JSON.stringify([{ value: 'attributes' }]),
    runtimeFieldMap: '{}',
    allowNoIndex: true,
  });
  const list = obj(
    'search',
    listId,
    {
      title: `[${prefix}] Private files`,
      description: 'Privately scanned files; hashes link to their behaviour reports, vhash to similar private files.',
      columns: ['sha256', 'magic', 'size', 'tags', 'vhash'],
      sort: [['fetched_at', 'desc']],
      kibanaSavedObjectMeta: { searchSourceJSON: searchSource('') },
    },
    [{ id: viewId, name: 'kibanaSavedObjectMeta.searchSourceJSON.index', type: 'index-pattern' }],
  );
  return [view, list];
}

/**
 * The artefact log's own data view (time field `fetched_at`): what was downloaded for which
 * report. `behaviour_id` links to that report in the pivot search.
 */
function artefactView(prefix: string, index: string, searchId: (key: string) => string): SavedObject {
  return obj('index-pattern', `${prefix}-artefacts`, {
    title: index,
    name: `${prefix} artefacts`,
    timeFieldName: 'fetched_at',
    fieldFormatMap: JSON.stringify({ behaviour_id: pivotLink(searchId('any'), 'id') }),
    fieldAttrs: JSON.stringify({ fetched_at: { customLabel: 'Fetched' } }),
    runtimeFieldMap: '{}',
    allowNoIndex: true,
  });
}

/** The objects as NDJSON (one object per line, trailing newline), what `_import` takes. */
export function kibanaNdjson(prefix = 'sandtrail'): string {
  return `${kibanaObjects(prefix)
    .map((o) => JSON.stringify(o))
    .join('\n')}\n`;
}
