import type { Writable } from 'node:stream';
import type { Sink, WatchStore } from '../store/index.js';
import { BoundedSeen } from './BoundedSeen.js';
import type { ExportOptions, ExportSummary } from './exportStix.js';
import { mispOf, mispUuid } from './mispObjects.js';
import { describeSelection, selectedBehaviours, selectionKey, type ExportSelection } from './selectedBehaviours.js';
import { writeText } from './writeText.js';

/**
 * Writes the selection as one MISP event (MISP's event JSON, as `pymisp` and MISP's import read
 * it) to `out`, as a stream: the objects in a first pass over the store, the attributes in a
 * second, then the event's own fields (its date and timestamp are the newest report's, known
 * only then; JSON keeps no order of keys). The event uuid derives from the selection, so the
 * same export updates the same event.
 */
export async function exportMisp(
  store: { sink: Sink; watches: WatchStore },
  selection: ExportSelection,
  out: Writable,
  o: ExportOptions = {},
): Promise<ExportSummary> {
  let behaviours = 0;
  let written = 0;
  let newest = 0;
  const pass = async (what: 'objects' | 'attributes'): Promise<void> => {
    const seen = new BoundedSeen(o.seenCap);
    let first = true;
    for await (const doc of selectedBehaviours(store, selection, o.pageSize)) {
      if (what === 'objects') {
        behaviours++;
        newest = Math.max(newest, doc.last_modification_date);
      }
      let text = '';
      for (const item of mispOf(doc)[what]) {
        if (!seen.add(item.uuid)) continue;
        text += `${first ? '\n' : ',\n'}${JSON.stringify(item)}`;
        first = false;
        written++;
      }
      if (text) await writeText(out, text);
    }
  };
  await writeText(out, '{"Event":{"Object":[');
  await pass('objects');
  await writeText(out, '],"Attribute":[');
  await pass('attributes');
  const at = newest > 0 ? newest : Math.floor(Date.now() / 1000);
  const event = {
    uuid: mispUuid(`event\u0000${selectionKey(selection)}`),
    info: `sandtrail: ${describeSelection(selection)}`,
    date: new Date(at * 1000).toISOString().slice(0, 10),
    timestamp: String(at),
    threat_level_id: '2',
    analysis: '2',
    distribution: '0',
    published: false,
    Tag: [{ name: 'tlp:amber' }],
  };
  await writeText(out, `],${JSON.stringify(event).slice(1)}}\n`);
  return { behaviours, objects: written };
}
