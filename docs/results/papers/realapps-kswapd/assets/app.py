#!/usr/bin/env python3
"""A Python app of the realapps scenario: loads its records (JSON lines) into objects, as
an app loads its data at start, says `ready`, then serves returns to it.

  app.py DATA.jsonl

Each `visit N` on its input is a return: it reads the hot head (the first 5 % of records: the
screen the user left, the recent items) and a window of 4 % that varies by visit (what the
user scrolls to this time), writes a field in that window (the app runs, it dirties pages),
and answers `ok`. `exit` ends it.
"""
import json
import random
import sys

records = []
with open(sys.argv[1]) as f:
    for line in f:
        records.append(json.loads(line))
by_user = {}
for r in records:
    by_user.setdefault(r["user"], []).append(r)
hot = max(1, len(records) // 20)
window = max(1, len(records) // 25)
print("ready", len(records), flush=True)

for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "exit":
        break
    if words[0] == "visit":
        n = int(words[1]) if len(words) > 1 else 0
        acc = sum(len(r["body"]) + r["n"] for r in records[:hot])
        start = random.Random(n).randrange(len(records))
        for i in range(window):
            r = records[(start + i) % len(records)]
            acc += len(r["title"]) + len(by_user[r["user"]])
            r["seen"] = n
        print("ok", acc, flush=True)
