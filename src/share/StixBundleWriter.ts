import type { Writable } from 'node:stream';
import { BoundedSeen } from './BoundedSeen.js';
import { EXTENSION_DEFINITION, IDENTITY } from './stixProducer.js';
import { derivedId } from './stixIds.js';
import type { StixObject } from './stixObjects.js';
import { writeText } from './writeText.js';

/**
 * A STIX 2.1 bundle written as a stream: the head, then each object once (by id, within the
 * BoundedSeen window), then the tail. The bundle id comes from what the export selected, so the
 * same export gives the same bundle.
 */
export class StixBundleWriter {
  private readonly seen: BoundedSeen;
  private started = false;
  private count = 0;

  constructor(
    private readonly out: Writable,
    private readonly selection: string,
    seenCap?: number,
  ) {
    this.seen = new BoundedSeen(seenCap);
  }

  /** Objects written so far (the identity and extension definition included). */
  get written(): number {
    return this.count;
  }

  async write(objects: readonly StixObject[]): Promise<void> {
    if (!this.started) await this.start();
    let text = '';
    for (const o of objects) {
      if (!this.seen.add(o.id)) continue;
      text += `,\n${JSON.stringify(o)}`;
      this.count++;
    }
    if (text) await writeText(this.out, text);
  }

  async end(): Promise<void> {
    if (!this.started) await this.start();
    await writeText(this.out, '\n]}\n');
  }

  private async start(): Promise<void> {
    this.started = true;
    const head = { type: 'bundle', id: derivedId('bundle', this.selection) };
    this.seen.add(IDENTITY.id);
    this.seen.add(EXTENSION_DEFINITION.id);
    this.count = 2;
    await writeText(
      this.out,
      `${JSON.stringify(head).slice(0, -1)},"objects":[\n${JSON.stringify(IDENTITY)},\n${JSON.stringify(EXTENSION_DEFINITION)}`,
    );
  }
}
