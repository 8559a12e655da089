import { canonicalId } from '../../../src/synth/index.js';

/** Artefacts a sandbox run may leave (`has_pcap`, `has_evtx`, `has_memdump`, `has_html_report`). */
export type ArtefactKind = 'pcap' | 'evtx' | 'memdump' | 'html';
export const ARTEFACT_KINDS: readonly ArtefactKind[] = ['pcap', 'evtx', 'memdump', 'html'];

/** A file the fake API knows. */
export interface FakeFile {
  /** Lower-case hex. */
  sha256: string;
  md5: string;
  sha1: string;
  /**
   * file_behaviour objects as the API returns them: `{type: 'file_behaviour', id: `${sha256}_${sandbox}`,
   * attributes, links: {self}}` (`links.self` is rewritten to the fake's URL when served; a
   * `context_attributes` member, which only feed lines have, is dropped).
   */
  behaviours: Record<string, unknown>[];
  /** private_file attributes (without gti_assessment); absent → /private/files/{sha256} answers 404. */
  private?: Record<string, unknown>;
  /** Served (as `gti_assessment`) only when the request carries an x-tool header. */
  gtiAssessment?: Record<string, unknown>;
  /** Artefact bytes per behaviour id and kind. */
  artefacts?: Record<string, Partial<Record<ArtefactKind, Buffer>>>;
  /** Public file attributes served by `/file_behaviours/{id}/file`; default derived from the hashes (and `private`). */
  file?: Record<string, unknown>;
}

const HEX = { sha256: 64, sha1: 40, md5: 32 } as const;

/** The fake's files, indexed by every hash form and by behaviour id. */
export class FileCatalog {
  private readonly byAnyHash = new Map<string, FakeFile>();
  private readonly behaviours = new Map<string, { file: FakeFile; behaviour: Record<string, unknown> }>();

  constructor(files: readonly FakeFile[] = []) {
    for (const file of files) {
      for (const [form, len] of Object.entries(HEX) as [keyof typeof HEX, number][]) {
        const h = file[form];
        if (typeof h !== 'string' || !new RegExp(`^[0-9a-f]{${len}}$`).test(h))
          throw new RangeError(`fake GTI files: ${form} must be ${len} lower-case hex characters, got ${JSON.stringify(h)}`);
        if (this.byAnyHash.has(h)) throw new RangeError(`fake GTI files: ${h} given twice`);
        this.byAnyHash.set(h, file);
      }
      for (const b of file.behaviours) {
        const id = b.id;
        if (typeof id !== 'string' || canonicalId(id).slice(0, 65) !== `${file.sha256}_`)
          throw new RangeError(`fake GTI files: behaviour id ${JSON.stringify(id)} is not ${file.sha256}_<sandbox>`);
        if (this.behaviours.has(canonicalId(id))) throw new RangeError(`fake GTI files: behaviour ${id} given twice`);
        this.behaviours.set(canonicalId(id), { file, behaviour: b });
      }
    }
  }

  /** The file whose sha256, sha1 or md5 is `hash` (any case). */
  byHash(hash: string): FakeFile | undefined {
    return this.byAnyHash.get(hash.toLowerCase());
  }

  /** The behaviour with that id (sha part in any case) and its file. */
  behaviour(id: string): { file: FakeFile; behaviour: Record<string, unknown> } | undefined {
    return this.behaviours.get(canonicalId(id));
  }

  /** The artefact bytes of a behaviour, when the file has them. */
  artefact(behaviourId: string, kind: ArtefactKind): Buffer | undefined {
    const found = this.behaviour(behaviourId);
    if (!found) return undefined;
    const stored = found.behaviour.id as string;
    return found.file.artefacts?.[stored]?.[kind];
  }
}

/** The hashes by which `file` may be named. */
export const hashesOf = (file: FakeFile): string[] => [file.sha256, file.sha1, file.md5];
