/** The input format of `sandtrail quota replay`, shown after its --help (docs/quota.md says the same). */
export const QUOTA_REPLAY_HELP = `
Input: one operation per line, a JSON object (blank lines are skipped), applied in
file order from an empty policy state (order is what "later" means for rule 6 and
for livehunt). Every operation has:
  "op"     the operation (below)                            required
  "user"   the user it is charged to (non-empty string)     required
  "group"  the user's group: its units count for it too (rule 8)
  "at"     when it happened, ISO-8601 (no offset = UTC; default: now)
Unknown fields are ignored; null means absent; counts are integers >= 0.

  op                      its fields                           charged (rule)
  api                     method, path[, invalid_id]           api_requests: 1, or 0 for quota
                                                               reads, /feeds, /asm, ... (1-3, 5-7)
  ioc_delta, ioc_backfill ioc_count                            api_requests: 0 if no IoC, else 1 (4)
  file_upload             sha256, known[, analysis_id]         api_requests: 1 if known, else 0
                          (analysis_id required if not known)  and the file's reads are free (1, 6)
  asm_api                 -                                    nothing (7)
  asm_entity_discovered   count                                asm_entities: count (14)
  ui_search               kind: "ioc", "pivot" or "page"       searches: 1 (9)
  ui_download             -                                    downloads: 1 (9)
  livehunt_ruleset        ruleset_id, rules, active            livehunt: active rules, once a month (10)
  retrohunt_job           -                                    retrohunt: 1 (11)
  diff_session            -                                    diff_sessions: 1 (12)
  private_scan_file       -                                    private_scanning_files: 1 (13)
  private_scan_url        -                                    private_scanning_urls: 1 (13)
  graph_create            visibility: "private" or "public",   private_graphs: 1, or api_requests:
                          items (required if public)           items (15)

"path" is relative to the API base, with or without /api/v3, or a full URL; "method"
an HTTP method (any case); "known", "active" and "invalid_id" are true or false.

Example:
  {"op":"api","user":"alice","group":"soc","method":"GET","path":"/files/44d88612fea8a8f36de82e1278abb02f"}
  {"op":"ui_search","user":"bob","kind":"pivot","at":"2026-11-01T10:00:00Z"}

Output: per user and per group, the units of each quota kind summed over the file
(kinds at zero left out); --json: {"users":{"alice":{"api_requests":1}},"groups":{...}}.
A malformed line charges nothing and is reported on stderr as {"line":N,"message":...};
the other lines still count, and the exit status is 3.`;
