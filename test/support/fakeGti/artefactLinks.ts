import { randomBytes } from 'node:crypto';
import { apiError, redirect, type Exchange } from './exchange.js';
import type { FaultState } from './faults.js';
import { ARTEFACT_KINDS, type ArtefactKind, type FileCatalog } from './fileCatalog.js';
import { sendBytes } from './sendFile.js';

const FEED_LINK_RE = /^\/api\/v3\/feeds\/(file_behaviours|file-behaviours)\/([^/]+)\/(pcap|evtx|memdump|html)$/;
const DOWNLOAD_RE = /^\/download\/artefact\/([^/]+)\/(pcap|evtx|memdump|html)$/;

/**
 * Artefact URLs: the API's `/file_behaviours/{id}/{kind}` and the feed lines' `context_attributes`
 * links (`/feeds/file_behaviours/{token}/{kind}`, key needed) both answer 302 to a download URL
 * `/download/artefact/{id}/{kind}?token=...` outside `/api/v3`, where the token is the credential.
 */
export class ArtefactLinks {
  /** Download token → what it opens (reusable, like a signed URL before it expires). */
  private readonly downloads = new Map<string, { behaviourId: string; kind: ArtefactKind }>();
  /** Feed-link token → behaviour id. */
  private readonly feedTokens = new Map<string, string>();
  /** Download tokens handed out as feed-line links on another host (not as redirect targets). */
  private readonly foreignLinks = new Set<string>();

  constructor(
    private readonly catalog: FileCatalog,
    private readonly faults: FaultState,
    private readonly origin: () => string,
    private readonly spelling: string,
  ) {}

  /** A feed line's link to the artefact (`foreignHost`: directly the key-less download URL). */
  feedLink(behaviourId: string, kind: ArtefactKind, opts: { foreignHost?: boolean } = {}): string {
    if (!ARTEFACT_KINDS.includes(kind)) throw new RangeError(`fake GTI feedLink: unknown artefact kind ${JSON.stringify(kind)}`);
    const found = this.catalog.behaviour(behaviourId);
    if (!found) throw new RangeError(`fake GTI feedLink: no file has behaviour ${JSON.stringify(behaviourId)}`);
    const id = found.behaviour.id as string;
    if (opts.foreignHost) {
      const url = this.downloadUrl(id, kind);
      this.foreignLinks.add(new URL(url).searchParams.get('token') as string);
      return url;
    }
    const token = Buffer.from(`${id}|feed`).toString('base64url');
    this.feedTokens.set(token, id);
    return `${this.origin()}/api/v3/feeds/${this.spelling}/${token}/${kind}`;
  }

  /** A fresh download URL for the artefact. */
  private downloadUrl(behaviourId: string, kind: ArtefactKind): string {
    const token = randomBytes(12).toString('hex');
    this.downloads.set(token, { behaviourId, kind });
    return `${this.origin()}/download/artefact/${encodeURIComponent(behaviourId)}/${kind}?token=${token}`;
  }

  /** 302 to the download URL when the file has the artefact, else 404. */
  redirect(ex: Exchange, behaviourId: string, kind: ArtefactKind): void {
    if (!this.catalog.artefact(behaviourId, kind)) return ex.notFound(`${kind} of ${behaviourId}`);
    const stored = this.catalog.behaviour(behaviourId)?.behaviour.id as string;
    redirect(ex, this.downloadUrl(stored, kind));
  }

  /** Answers `/api/v3/feeds/{spelling}/{token}/{kind}` (already authenticated); false when the path is not one. */
  feedRequest(ex: Exchange): boolean {
    const m = FEED_LINK_RE.exec(ex.entry.path);
    if (!m || ex.req.method !== 'GET') return false;
    const [, spelling, token, kind] = m as unknown as [string, string, string, ArtefactKind];
    const id = spelling === this.spelling ? this.feedTokens.get(token) : undefined;
    if (id === undefined) ex.notFound(`resource ${ex.entry.path}`);
    else this.redirect(ex, id, kind);
    return true;
  }

  /** Answers `/download/artefact/...` (no key needed); false when the path is not one. */
  async download(ex: Exchange): Promise<boolean> {
    const m = DOWNLOAD_RE.exec(ex.entry.path);
    if (!m) return false;
    const [, encodedId, kind] = m as unknown as [string, string, ArtefactKind];
    const token = ex.url.searchParams.get('token') ?? '';
    // a feed-line link on another host is a call of its own (the feed link's operation, rule 3);
    // a download a 302 pointed to is part of the call that answered the 302
    if (this.foreignLinks.has(token)) ex.entry.operation = `GET /feeds/${this.spelling}/{token}/${kind}`;
    const t = this.downloads.get(token);
    if (ex.req.method !== 'GET' || !t || t.kind !== kind || safeDecode(encodedId) !== t.behaviourId) {
      ex.reply(403, apiError('ForbiddenError', 'invalid or expired download token'));
      return true;
    }
    const bytes = this.catalog.artefact(t.behaviourId, kind);
    if (!bytes) {
      ex.notFound(`${kind} of ${t.behaviourId}`);
      return true;
    }
    const instead = this.faults.takeArtefactAnswer();
    if (instead) {
      ex.settle(200);
      const page = instead === 'html' ? Buffer.from('<!DOCTYPE html><html><body>Sign in</body></html>') : Buffer.alloc(0);
      ex.res.writeHead(200, {
        'content-type': instead === 'html' ? 'text/html' : 'application/octet-stream',
        'content-length': String(page.length),
      });
      ex.res.end(page);
      return true;
    }
    const cutAt = this.faults.takeTruncateArtefact(bytes.length);
    ex.settle(200);
    await sendBytes(ex.res, bytes, { cutAt, bytesPerSecond: this.faults.slowFor(t.behaviourId) });
    return true;
  }
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}
