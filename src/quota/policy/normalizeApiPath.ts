const ABSOLUTE_URL = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * The path segments of an API request, relative to the versioned base: a full URL loses its
 * scheme and host, a query string or fragment is dropped, a leading `/api/v3` is removed, empty
 * segments (doubled or trailing slashes) vanish, each segment is percent-decoded and `.` and `..`
 * are resolved.
 * `https://host/api/v3/files/abc?x=1`, `/api/v3/files/abc` and `files/abc` all give `['files', 'abc']`.
 * Returns null when `path` is a URL that does not parse, or climbs above the root with `..`.
 */
export function normalizeApiPath(path: string): string[] | null {
  let p = path.trim();
  if (ABSOLUTE_URL.test(p)) {
    try {
      p = new URL(p).pathname;
    } catch {
      return null;
    }
  } else {
    p = p.replace(/[?#].*$/s, '');
  }
  // dot segments resolved as a server does (`%2e%2e` too): `/feeds/../files/x` is a file request
  const segments: string[] = [];
  for (const s of p.split('/').map(decodeSegment)) {
    if (s === '' || s === '.') continue;
    if (s !== '..') segments.push(s);
    else if (segments.pop() === undefined) return null;
  }
  if (segments[0] === 'api' && segments[1] === 'v3') segments.splice(0, 2);
  return segments;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    // a stray `%` is just a character of an id; keep the segment as written
    return s;
  }
}
