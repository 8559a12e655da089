import { createHash } from 'node:crypto';
import { API_BASE, createPivotPools, generateRecord, Rng, vocab, type PivotPools } from '../../../src/synth/index.js';
import { ARTEFACT_KINDS, type ArtefactKind, type FakeFile } from './fileCatalog.js';

/** Options of {@link makeFakeFile}. */
export interface MakeFakeFileOptions {
  /** Sandbox names of the behaviours; default `VirusTotal Jujubox`, `Zenbox`, `CAPE Sandbox`. */
  sandboxes?: string[];
  /**
   * How many behaviours (default: one per sandbox). Beyond the sandboxes given, further public
   * sandboxes are used, then private analyses (`<sandbox>-<epoch>` ids).
   */
  behaviours?: number;
  /** Give the file a private report (every private_file attribute plus one undocumented) and a gtiAssessment. */
  withPrivate?: boolean;
  /** Give each behaviour whose `has_pcap` / `has_evtx` / `has_memdump` / `has_html_report` is true that many bytes of that artefact. */
  artefactBytes?: number;
}

const DEFAULT_SANDBOXES = ['VirusTotal Jujubox', 'Zenbox', 'CAPE Sandbox'];
const HAS_FLAG: Record<ArtefactKind, string> = { pcap: 'has_pcap', evtx: 'has_evtx', memdump: 'has_memdump', html: 'has_html_report' };
/** How each artefact really starts (pcap global header, EVTX file header, minidump, HTML). */
const ARTEFACT_HEAD: Record<ArtefactKind, Buffer> = {
  pcap: Buffer.from('d4c3b2a1020004000000000000000000ffff000001000000', 'hex'),
  evtx: Buffer.from('ElfFile\0', 'latin1'),
  memdump: Buffer.from('MDMP\x93\xa7\0\0', 'latin1'),
  html: Buffer.from('<!DOCTYPE html>\n<html><head><title>Behaviour report</title></head><body>\n', 'utf8'),
};

interface Profile {
  tag: string;
  ext: string;
  magic: string;
  typeDescription: string;
  exiftool: Record<string, string>;
  trid: [string, number][];
  tags: string[];
  size: [number, number];
}

const PROFILES: readonly Profile[] = [
  {
    tag: 'peexe',
    ext: 'exe',
    magic: 'PE32 executable (GUI) Intel 80386, for MS Windows',
    typeDescription: 'Win32 EXE',
    exiftool: {
      MIMEType: 'application/octet-stream',
      FileType: 'Win32 EXE',
      FileTypeExtension: 'exe',
      MachineType: 'Intel 386 or later, and compatibles',
      PEType: 'PE32',
      Subsystem: 'Windows GUI',
      LinkerVersion: '14.29',
    },
    trid: [
      ['Win32 Executable MS Visual C++ (generic)', 47.3],
      ['Win64 Executable (generic)', 15.9],
      ['Win32 Dynamic Link Library (generic)', 11.2],
      ['Win16/32 Executable Delphi generic', 8.1],
    ],
    tags: ['peexe', 'overlay', 'detect-debug-environment', 'long-sleeps'],
    size: [40_000, 3_000_000],
  },
  {
    tag: 'docx',
    ext: 'docx',
    magic: 'Microsoft Word 2007+',
    typeDescription: 'Office Open XML Document',
    exiftool: {
      MIMEType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      FileType: 'DOCX',
      FileTypeExtension: 'docx',
      Application: 'Microsoft Office Word',
      Pages: '1',
      ZipCompression: 'Deflated',
    },
    trid: [
      ['Word Microsoft Office Open XML Format document (with Macro)', 53.1],
      ['Word Microsoft Office Open XML Format document', 24.2],
      ['Open Packaging Conventions container', 18],
    ],
    tags: ['docx', 'macros', 'auto-open'],
    size: [10_000, 200_000],
  },
  {
    tag: 'powershell',
    ext: 'ps1',
    magic: 'ASCII text, with very long lines (2389), with CRLF line terminators',
    typeDescription: 'Powershell',
    exiftool: {
      MIMEType: 'text/plain',
      FileType: 'TXT',
      FileTypeExtension: 'txt',
      MIMEEncoding: 'us-ascii',
      LineCount: '41',
      WordCount: '512',
      Newlines: 'Windows CRLF',
    },
    trid: [['Text - UTF-8 encoded', 100]],
    tags: ['powershell', 'long-lines', 'base64-embedded'],
    size: [1_000, 60_000],
  },
];

let pools: PivotPools | undefined;

const digest = (algo: string, s: string): string => createHash(algo).update(s).digest('hex');

/**
 * A realistic file for the fake GTI: hashes derived from `seed` (sha256/sha1/md5 of the seed
 * string), behaviours from the synthetic record generator (ids `${sha256}_${sandbox}`, API shape:
 * no `context_attributes`), the first one with every `has_*` flag on; optionally a private report
 * and artefact bytes. Equal seeds and options give equal files.
 */
export function makeFakeFile(seed: number | string, opts: MakeFakeFileOptions = {}): FakeFile {
  const key = String(seed);
  const sha256 = digest('sha256', key);
  const rng = new Rng(`fake-file:${key}`);
  const profile = rng.pick(PROFILES);
  const sandboxes = opts.sandboxes ?? DEFAULT_SANDBOXES;
  const count = opts.behaviours ?? sandboxes.length;
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`makeFakeFile: behaviours must be an integer ≥ 0, got ${count}`);
  const names = [...sandboxes, ...vocab.sandboxes.filter((s) => !sandboxes.includes(s))];
  const firstAnalysis = 1_793_491_200 - rng.int(86_400);
  pools ??= createPivotPools(0);

  const file: FakeFile = { sha256, sha1: digest('sha1', key), md5: digest('md5', key), behaviours: [] };
  for (let i = 0; i < count; i++) {
    const analysisDate = firstAnalysis + i * 600;
    const sandboxName = names[i] ?? names[i % Math.max(1, sandboxes.length)] ?? 'Zenbox';
    const sandboxId = i < names.length ? sandboxName : `${sandboxName}-${analysisDate}`;
    const record = generateRecord(rng, {
      pools,
      big: false,
      lastModificationDate: analysisDate + 900,
      identity: { sha256, sandboxName, sandboxId, analysisDate },
      variants: { relationships: 0 },
    });
    const attributes = record.attributes;
    if (i === 0) for (const k of ARTEFACT_KINDS) attributes[HAS_FLAG[k]] = true;
    const id = `${sha256}_${sandboxId}`;
    file.behaviours.push({
      type: 'file_behaviour',
      id,
      attributes,
      links: { self: `${API_BASE}/file_behaviours/${encodeURIComponent(id)}` },
    });
    if (opts.artefactBytes !== undefined) {
      const kinds = ARTEFACT_KINDS.filter((k) => attributes[HAS_FLAG[k]] === true);
      if (kinds.length > 0) {
        file.artefacts ??= {};
        file.artefacts[id] = Object.fromEntries(kinds.map((k) => [k, artefactBytes(`${id}|${k}`, k, opts.artefactBytes ?? 0)]));
      }
    }
  }

  const size = rng.range(...profile.size);
  const name = `${['invoice_', 'setup_', 'scan_', 'update_'][rng.int(4)]}${sha256.slice(0, 6)}.${profile.ext}`;
  const malicious = rng.range(20, 60);
  file.file = {
    sha256,
    sha1: file.sha1,
    md5: file.md5,
    size,
    type_description: profile.typeDescription,
    type_tag: profile.tag,
    names: [name, `${sha256}.${profile.ext}`],
    meaningful_name: name,
    last_analysis_stats: {
      malicious,
      suspicious: rng.range(0, 3),
      undetected: 72 - malicious,
      harmless: 0,
      timeout: rng.range(0, 2),
      'confirmed-timeout': 0,
      'type-unsupported': rng.range(0, 8),
      failure: rng.range(0, 1),
    },
  };
  if (opts.withPrivate) {
    let block = 3;
    while (block * 64 < size) block *= 2;
    const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    file.private = {
      sha256,
      sha1: file.sha1,
      md5: file.md5,
      size,
      magic: profile.magic,
      tags: [...profile.tags],
      exiftool: { ...profile.exiftool },
      trid: profile.trid.map(([file_type, probability]) => ({ file_type, probability })),
      vhash: profile.tag === 'peexe' ? `0${rng.chars(8, '0123456789')}z${rng.range(1, 9)}hz${rng.range(1, 5)}z` : rng.hex(32),
      ssdeep: `${block}:${rng.chars(rng.range(30, 64), b64)}:${rng.chars(rng.range(10, 32), b64)}`,
      // not in the spec's table: readers must keep or ignore it, not fail
      popular_threat_classification: {
        suggested_threat_label: 'trojan.agenttesla/msil',
        popular_threat_category: [{ value: 'trojan', count: malicious }],
      },
    };
    file.gtiAssessment = {
      verdict: { value: 'VERDICT_MALICIOUS' },
      threat_score: { value: rng.range(70, 99) },
      severity: { value: 'SEVERITY_HIGH' },
      description: `This indicator is malicious (high confidence): ${malicious} security vendors flagged it and it matches known ${profile.tag} malware behaviour.`,
    };
  }
  return file;
}

/** `size` deterministic bytes that start like a real artefact of that kind. */
function artefactBytes(seed: string, kind: ArtefactKind, size: number): Buffer {
  const out = Buffer.alloc(size);
  const head = ARTEFACT_HEAD[kind];
  head.copy(out, 0, 0, Math.min(head.length, size));
  const rng = new Rng(seed);
  for (let i = head.length; i < size; i += 4) {
    const v = rng.u32();
    for (let j = 0; j < 4 && i + j < size; j++) out[i + j] = (v >>> (8 * j)) & 255;
  }
  return out;
}
