/**
 * The operation a request to the fake is, as the service meters it: method and route template
 * (`GET /files/{id}/behaviours`, `GET /users/{id}/overall_quotas`, `GET /feeds/file_behaviours/{id}`,
 * a feed-line link `GET /feeds/file_behaviours/{token}/pcap`), or null for a request that is no
 * API operation (a download from the storage host a 302 pointed to: part of the call that
 * answered the 302). Written from the routes the fake serves, apart from sandtrail's own labels,
 * so comparing the two checks both.
 */
export function operationOf(method: string, path: string): string | null {
  if (!path.startsWith('/api/v3/')) return null;
  const s = path.slice('/api/v3/'.length).split('/');
  const [a, b, c, d] = s;
  let route: string;
  if (a === 'feeds' && s.length === 3) route = `/feeds/${b}/{id}`;
  else if (a === 'feeds' && s.length === 4 && c === 'hourly') route = `/feeds/${b}/hourly/{id}`;
  else if (a === 'feeds' && s.length === 4) route = `/feeds/${b}/{token}/${d}`;
  else if (a === 'users' && s.length >= 2) route = `/users/{id}${s.length > 2 ? `/${s.slice(2).join('/')}` : ''}`;
  else if (a === 'private' && b === 'files' && s.length === 3) route = '/private/files/{id}';
  else if ((a === 'files' || a === 'file_behaviours') && s.length >= 2)
    route = `/${a}/{id}${s.length > 2 ? `/${s.slice(2).join('/')}` : ''}`;
  else route = `/${s.join('/')}`;
  return `${method.toUpperCase()} ${route}`;
}

/**
 * API units the spec's rules give one answered request of `operation` (for a user without
 * upload grants): 0 for quota reads (rule 2) and feed endpoints with their links (rule 3), 1 for
 * any other request (rule 1).
 */
export function unitsOf(operation: string): number {
  const route = operation.slice(operation.indexOf(' ') + 1);
  if (/^\/users\/\{id\}\/(overall_quotas|api_usage)$/.test(route)) return 0;
  if (route.startsWith('/feeds/')) return 0;
  return 1;
}
