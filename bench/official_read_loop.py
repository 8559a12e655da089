#!/usr/bin/env python3
"""The official GTI Python client's way of reading feed batches, for `npm run bench`.

For each minute file given on the command line: read the whole file, bz2.decompress it in
memory, then json.loads every line (as the client does with each batch it downloads); nothing
is kept. Python 3 standard library only. Prints one JSON object on stdout:

  {"records": lines read, "ok": lines that parsed to a JSON object, "bytes": decompressed bytes,
   "seconds": time of the read loop (interpreter start-up excluded), "maxRssKb": peak RSS}
"""
import bz2
import io
import json
import resource
import sys
import time


def main(paths):
    records = 0
    ok = 0
    size = 0
    start = time.perf_counter()
    for path in paths:
        with open(path, "rb") as f:
            batch = bz2.decompress(f.read())
        size += len(batch)
        # Line by line from the decompressed batch, split on b"\n" only (as the feed's lines are).
        for line in io.BytesIO(batch):
            records += 1
            try:
                if isinstance(json.loads(line), dict):
                    ok += 1
            except ValueError:
                pass  # a malformed line: counted in records, not in ok
        del batch
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB on Linux
    json.dump({"records": records, "ok": ok, "bytes": size, "seconds": seconds, "maxRssKb": peak_kb}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
