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

/** Reports per interval, stacked by sandbox. */
export function perSandboxHistogram(title: string): string {
  return JSON.stringify({
    title,
    type: 'histogram',
    aggs: [
      { id: '1', enabled: true, type: 'count', params: { emptyAsNull: false }, schema: 'metric' },
      {
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
      },
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
    params: {
      type: 'histogram',
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
          title: { text: 'Behaviour reports' },
        },
      ],
      seriesParams: [
        {
          show: true,
          type: 'histogram',
          mode: 'stacked',
          data: { label: 'Behaviour reports', id: '1' },
          valueAxis: 'ValueAxis-1',
          drawLinesBetweenPoints: true,
          showCircles: true,
        },
      ],
      addTooltip: true,
      addLegend: true,
      legendPosition: 'right',
      times: [],
      addTimeMarker: false,
      thresholdLine: { show: false, value: 10, width: 1, style: 'full', color: '#E7664C' },
      labels: { show: false },
    },
  });
}

/** Max ingestion lag per interval, from the batch log. */
export function lagLine(title: string): string {
  return JSON.stringify({
    title,
    type: 'line',
    aggs: [
      { id: '1', enabled: true, type: 'max', params: { field: 'lag_seconds', customLabel: title }, schema: 'metric' },
      {
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
      },
    ],
    params: {
      type: 'line',
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
          title: { text: title },
        },
      ],
      seriesParams: [
        {
          show: true,
          type: 'line',
          mode: 'normal',
          data: { label: title, id: '1' },
          valueAxis: 'ValueAxis-1',
          drawLinesBetweenPoints: true,
          showCircles: true,
          interpolate: 'linear',
          lineWidth: 2,
        },
      ],
      addTooltip: true,
      addLegend: false,
      legendPosition: 'right',
      times: [],
      addTimeMarker: false,
      thresholdLine: { show: false, value: 10, width: 1, style: 'full', color: '#E7664C' },
      labels: { show: false },
    },
  });
}
