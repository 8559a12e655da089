/** Kibana visualization states (legacy `visState` JSON, which Kibana 8 and 9 migrate on import). */

/** A table of the top `size` values of `field` by document count. */
export function termsTable(title: string, field: string, size: number): string {
  return JSON.stringify({
    title,
    type: 'table',
    aggs: [
      { id: '1', enabled: true, type: 'count', params: { emptyAsNull: false }, schema: 'metric' },
      {
        id: '2',
        enabled: true,
        type: 'terms',
        params: { field, orderBy: '1', order: 'desc', size, otherBucket: false, missingBucket: false, customLabel: title },
        schema: 'bucket',
      },
    ],
    params: { perPage: size, showPartialRows: false, showMetricsAtAllLevels: false, showTotal: false, totalFunc: 'sum', percentageCol: '' },
  });
}

/** The x axis of a time chart: `@timestamp` in automatic intervals. */
const DATE_HISTOGRAM = {
  id: '2',
  enabled: true,
  type: 'date_histogram',
  params: {
    field: '@timestamp',
    useNormalizedEsInterval: true,
    interval: 'auto',
    drop_partials: false,
    min_doc_count: 1,
    extended_bounds: {},
  },
  schema: 'segment',
};

/** The `params` of an XY chart over time with one series (metric `1`) on a left axis titled `axisTitle`. */
function xyParams(
  type: 'histogram' | 'line',
  mode: 'stacked' | 'normal',
  axisTitle: string,
  o: { addLegend: boolean; series?: Record<string, unknown> },
): Record<string, unknown> {
  return {
    type,
    grid: { categoryLines: false },
    categoryAxes: [
      {
        id: 'CategoryAxis-1',
        type: 'category',
        position: 'bottom',
        show: true,
        scale: { type: 'linear' },
        labels: { show: true, filter: true, truncate: 100 },
        title: {},
      },
    ],
    valueAxes: [
      {
        id: 'ValueAxis-1',
        name: 'LeftAxis-1',
        type: 'value',
        position: 'left',
        show: true,
        scale: { type: 'linear', mode: 'normal' },
        labels: { show: true, rotate: 0, filter: false, truncate: 100 },
        title: { text: axisTitle },
      },
    ],
    seriesParams: [
      {
        show: true,
        type,
        mode,
        data: { label: axisTitle, id: '1' },
        valueAxis: 'ValueAxis-1',
        drawLinesBetweenPoints: true,
        showCircles: true,
        ...o.series,
      },
    ],
    addTooltip: true,
    addLegend: o.addLegend,
    legendPosition: 'right',
    times: [],
    addTimeMarker: false,
    thresholdLine: { show: false, value: 10, width: 1, style: 'full', color: '#E7664C' },
    labels: { show: false },
  };
}

/** Reports per interval, stacked by sandbox. */
export function perSandboxHistogram(title: string): string {
  return JSON.stringify({
    title,
    type: 'histogram',
    aggs: [
      { id: '1', enabled: true, type: 'count', params: { emptyAsNull: false }, schema: 'metric' },
      DATE_HISTOGRAM,
      {
        id: '3',
        enabled: true,
        type: 'terms',
        params: {
          field: 'sandbox_name',
          orderBy: '1',
          order: 'desc',
          size: 10,
          otherBucket: true,
          otherBucketLabel: 'Other',
          missingBucket: false,
        },
        schema: 'group',
      },
    ],
    params: xyParams('histogram', 'stacked', 'Behaviour reports', { addLegend: true }),
  });
}

/** Max ingestion lag per interval, from the batch log. */
export function lagLine(title: string): string {
  return JSON.stringify({
    title,
    type: 'line',
    aggs: [{ id: '1', enabled: true, type: 'max', params: { field: 'lag_seconds', customLabel: title }, schema: 'metric' }, DATE_HISTOGRAM],
    params: xyParams('line', 'normal', title, { addLegend: false, series: { interpolate: 'linear', lineWidth: 2 } }),
  });
}
