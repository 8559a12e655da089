"""Polls sandtrail's TAXII 2.1 server with taxii2-client, as a SIEM's or TIP's connector does; prints one JSON report.

Usage: python3 check_taxii.py DISCOVERY_URL USER PASSWORD PER_REQUEST STATE_FILE BUNDLE_DIR

Discovers the server, lists the API root's collections and polls each one with taxii2-client's
own paging (as_pages over get_objects, `added_after` from the last poll kept in STATE_FILE, as a
connector keeps it). The objects of each poll are written to BUNDLE_DIR as a STIX bundle for the
validator; the report says, per collection, how many objects the poll got, how many distinct
(id, version) pairs, and what the manifest lists.
"""
import json
import os
import sys

from taxii2client.v21 import Server, as_pages


def main(url, user, password, per_request, state_file, bundle_dir):
    per_request = int(per_request)
    state = {}
    if os.path.exists(state_file):
        with open(state_file, encoding="utf-8") as f:
            state = json.load(f)
    server = Server(url, user=user, password=password)
    root = server.api_roots[0]
    # taxii2-client hands back the envelopes only: the X-TAXII-Date-Added-Last of each page, which a
    # connector keeps as its next added_after, is read off the responses of its own session
    seen = []
    root._conn.session.hooks["response"].append(lambda r, *a, **k: seen.append(r.headers.get("X-TAXII-Date-Added-Last")))
    report = {"title": server.title, "api_root": root.title, "versions": root.versions, "collections": {}}
    for c in root.collections:
        added_after = state.get(c.id)
        objects = []
        pages = 0
        last = added_after
        kwargs = {"added_after": added_after} if added_after else {}
        for envelope in as_pages(c.get_objects, per_request=per_request, **kwargs):
            pages += 1
            objects.extend(envelope.get("objects", []))
            if seen[-1]:
                last = seen[-1]
        if last:
            state[c.id] = last
        manifest = []
        for envelope in as_pages(c.get_manifest, per_request=per_request, **kwargs):
            manifest.extend(envelope.get("objects", []))
        pairs = {(o["id"], o.get("modified", "")) for o in objects}
        bundle = None
        if objects:
            bundle = os.path.join(bundle_dir, f"{c.id}.{len(os.listdir(bundle_dir))}.stix.json")
            with open(bundle, "w", encoding="utf-8") as f:
                json.dump({"type": "bundle", "id": "bundle--" + c.id, "objects": objects}, f)
        report["collections"][c.id] = {
            "title": c.title,
            "can_read": c.can_read,
            "can_write": c.can_write,
            "media_types": c.media_types,
            "pages": pages,
            "objects": len(objects),
            "distinct": len(pairs),
            "ids": sorted({o["id"] for o in objects}),
            "manifest": len(manifest),
            "manifest_distinct": len({(m["id"], m["version"]) for m in manifest}),
            "added_after": added_after,
            "bundle": bundle,
        }
    with open(state_file, "w", encoding="utf-8") as f:
        json.dump(state, f)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
