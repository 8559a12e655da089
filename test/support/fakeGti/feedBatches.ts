import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findCompressor } from '../../../src/synth/index.js';
import { writeHourPackage, type TarEntry } from './hourPackage.js';

/** A file to serve. */
export interface BatchFile {
  path: string;
  size: number;
}

/**
 * The feed directory the fake serves: minute batches `YYYYMMDDhhmm.jsonl.bz2` and hourly packages
 * `YYYYMMDDhh.tar.bz2`, built on the fly (and cached in a private temp dir) when absent. Read on
 * every request, so files may appear at run time.
 */
export class FeedBatches {
  private readonly children = new Set<ChildProcess>();
  private readonly hourCache = new Map<string, Promise<BatchFile>>();
  private cacheDir: Promise<string> | undefined;

  constructor(
    private readonly feedDir: string | undefined,
    private readonly compressor: string | undefined,
  ) {}

  async minuteFile(minute: string): Promise<BatchFile | null> {
    if (!this.feedDir) return null;
    const path = join(this.feedDir, `${minute}.jsonl.bz2`);
    const s = await stat(path).catch(() => null);
    return s?.isFile() ? { path, size: s.size } : null;
  }

  /** The hour's package on disk, or the minute files to build it from (null when neither exists). */
  async hourSource(hour: string): Promise<BatchFile | { entries: TarEntry[] } | null> {
    if (!this.feedDir) return null;
    const pkg = join(this.feedDir, `${hour}.tar.bz2`);
    const s = await stat(pkg).catch(() => null);
    if (s?.isFile()) return { path: pkg, size: s.size };
    const names = (await readdir(this.feedDir).catch(() => [] as string[]))
      .filter((n) => n.startsWith(hour) && /^\d{12}\.jsonl\.bz2$/.test(n))
      .sort();
    const entries: TarEntry[] = [];
    for (const name of names) {
      const path = join(this.feedDir, name);
      const fs = await stat(path).catch(() => null);
      if (fs?.isFile()) entries.push({ name, path, size: fs.size, mtimeMs: fs.mtimeMs });
    }
    return entries.length > 0 ? { entries } : null;
  }

  /** The hour's package, from disk or built (once per set of minute files); null when there is nothing for it. */
  async hourFile(hour: string): Promise<BatchFile | null> {
    const src = await this.hourSource(hour);
    return src === null ? null : 'entries' in src ? this.builtHour(hour, src.entries) : src;
  }

  private builtHour(hour: string, entries: TarEntry[]): Promise<BatchFile> {
    const key = `${hour}|${entries.map((e) => `${e.name}:${e.size}:${e.mtimeMs}`).join(',')}`;
    let p = this.hourCache.get(key);
    if (!p) {
      p = (async () => {
        this.cacheDir ??= mkdtemp(join(tmpdir(), 'fake-gti-hourly-'));
        const out = join(await this.cacheDir, `${hour}-${this.hourCache.size}.tar.bz2`);
        await writeHourPackage(entries, out, findCompressor(this.compressor), (c) => {
          this.children.add(c);
          c.once('close', () => this.children.delete(c));
        });
        return { path: out, size: (await stat(out)).size };
      })();
      this.hourCache.set(key, p);
      p.catch(() => this.hourCache.delete(key));
    }
    return p;
  }

  /** Kills the compressors still running and removes the cache. */
  async close(): Promise<void> {
    for (const c of this.children) c.kill('SIGKILL');
    await Promise.allSettled(this.hourCache.values());
    if (this.cacheDir) await rm(await this.cacheDir, { recursive: true, force: true });
  }
}
