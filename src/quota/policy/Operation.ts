/**
 * What every operation carries. `group` makes rule 8 apply (the units count for the group too);
 * `at` is when it happened (parseOperation fills in the caller's "now" when absent).
 */
export interface OperationBase {
  user: string;
  group?: string;
  at?: Date;
}

/** Any request to the API; `path` is relative to the versioned base, with or without `/api/v3`, or a full URL. */
export interface ApiOperation extends OperationBase {
  op: 'api';
  /** Upper-case HTTP method. */
  method: string;
  path: string;
  /** The `{id}` of GET /analyses/{id} was invalid (rule 5). */
  invalid_id?: boolean;
}

/** An IoC stream delta or backfill request and how many IoCs it returned (rule 4). */
export interface IocOperation extends OperationBase {
  op: 'ioc_delta' | 'ioc_backfill';
  ioc_count: number;
}

/** A file upload; `known: false` (the service did not know the file) opens rule 6 for the uploader. */
export interface FileUploadOperation extends OperationBase {
  op: 'file_upload';
  /** Lower-case SHA-256 of the uploaded file. */
  sha256: string;
  known: boolean;
  /** Id of the analysis the upload started; required when `known` is false. */
  analysis_id?: string;
}

/** A call to an ASM API endpoint (rule 7). */
export interface AsmApiOperation extends OperationBase {
  op: 'asm_api';
}

/** Entities discovered in the user's ASM projects (rule 14). */
export interface AsmEntityOperation extends OperationBase {
  op: 'asm_entity_discovered';
  count: number;
}

/** A web UI search: a direct IoC search, a pivot, or paging an advanced search (rule 9). */
export interface UiSearchOperation extends OperationBase {
  op: 'ui_search';
  kind: 'ioc' | 'pivot' | 'page';
}

/** A file download through the web UI (rule 9). */
export interface UiDownloadOperation extends OperationBase {
  op: 'ui_download';
}

/** The state of one Livehunt ruleset as seen at `at` (rule 10). */
export interface LivehuntOperation extends OperationBase {
  op: 'livehunt_ruleset';
  ruleset_id: string;
  rules: number;
  active: boolean;
}

/** A Retrohunt job created, whatever its outcome (rule 11). */
export interface RetrohuntOperation extends OperationBase {
  op: 'retrohunt_job';
}

/** A diff session created (rule 12). */
export interface DiffSessionOperation extends OperationBase {
  op: 'diff_session';
}

/** A file or URL submitted to Private Scanning (rule 13). */
export interface PrivateScanOperation extends OperationBase {
  op: 'private_scan_file' | 'private_scan_url';
}

/** A graph created (rule 15): private graphs count as such; public ones cost the API requests loading their items takes. */
export type GraphCreateOperation = OperationBase & { op: 'graph_create' } & (
    { visibility: 'private'; items?: number } | { visibility: 'public'; items: number }
  );

/** One operation the quota policy prices; `op` discriminates. */
export type Operation =
  | ApiOperation
  | IocOperation
  | FileUploadOperation
  | AsmApiOperation
  | AsmEntityOperation
  | UiSearchOperation
  | UiDownloadOperation
  | LivehuntOperation
  | RetrohuntOperation
  | DiffSessionOperation
  | PrivateScanOperation
  | GraphCreateOperation;

/** The operation names, as they appear in `op`. */
export type OperationName = Operation['op'];

/** An operation with its time settled, as parseOperation returns and chargeOf takes. */
export type TimedOperation = Operation & { at: Date };
