#!/usr/bin/env python3
"""Seeded data for the realapps scenario's programs, generated once and cached.

  gen.py records OUT MIB SEED   JSON lines: one record a line (notes, mail, chat, documents)
  gen.py rdb OUT MIB SEED       a Redis RDB file of string keys r:0..r:N-1 and meta:n

Records look like what apps keep: ids, names, timestamps, tags, text built from a
vocabulary (compresses as text does, 2-3x) and a share of random blobs (thumbnails, tokens:
incompressible), so zram sees the mix it sees on phones. The same seed gives the same bytes.
Written to OUT.tmp and renamed, so an interrupted run never leaves half a file.
"""
import base64
import json
import os
import random
import struct
import sys

WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what "
    "all were we when your can said there use an each which she do how their if will up other about out many then them these "
    "so some her would make like him into time has look two more write go see number no way could people my than first water "
    "been call who oil its now find long down day did get come made may part meeting project photo album message reply invoice "
    "order delivery weather route station coffee music playlist episode chapter draft review payment account password update"
).split()


def sentence(rnd, n):
    return " ".join(rnd.choice(WORDS) for _ in range(n)).capitalize() + "."


def record(rnd, i):
    body = " ".join(sentence(rnd, rnd.randint(6, 18)) for _ in range(rnd.randint(3, 12)))
    rec = {
        "id": i,
        "user": "user%05d" % rnd.randrange(20000),
        "ts": 1700000000 + rnd.randrange(50000000),
        "title": sentence(rnd, rnd.randint(3, 8)),
        "tags": [rnd.choice(WORDS) for _ in range(rnd.randint(1, 5))],
        "n": rnd.randrange(1000),
        "body": body,
    }
    if rnd.random() < 0.25:
        rec["blob"] = base64.b64encode(rnd.randbytes(rnd.randint(200, 1200))).decode()
    return rec


def records(out, mib, seed):
    rnd = random.Random(seed)
    target = mib << 20
    size, i = 0, 0
    with open(out + ".tmp", "w") as f:
        while size < target:
            line = json.dumps(record(rnd, i), separators=(",", ":")) + "\n"
            f.write(line)
            size += len(line)
            i += 1
    os.rename(out + ".tmp", out)


def rdb_length(n):
    if n < 1 << 6:
        return bytes([n])
    if n < 1 << 14:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + struct.pack(">I", n)


def rdb_string(b):
    return rdb_length(len(b)) + b


def rdb(out, mib, seed):
    """RDB version 9: SELECTDB 0, string entries, EOF and a zero checksum (Redis skips the
    check for a zero checksum)."""
    rnd = random.Random(seed)
    target = mib << 20
    entries, size = [], 0
    while size < target:
        value = json.dumps(record(rnd, len(entries)), separators=(",", ":")).encode()
        entries.append(value)
        size += len(value) + 64
    with open(out + ".tmp", "wb") as f:
        f.write(b"REDIS0009")
        f.write(b"\xfe\x00")  # SELECTDB 0
        f.write(b"\xfb" + rdb_length(len(entries) + 1) + rdb_length(0))  # RESIZEDB
        f.write(b"\x00" + rdb_string(b"meta:n") + rdb_string(str(len(entries)).encode()))
        for i, value in enumerate(entries):
            f.write(b"\x00" + rdb_string(b"r:%d" % i) + rdb_string(value))
        f.write(b"\xff" + b"\x00" * 8)
    os.rename(out + ".tmp", out)


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("records", "rdb"):
        sys.exit(__doc__)
    kind, out, mib, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    (records if kind == "records" else rdb)(out, mib, seed)


if __name__ == "__main__":
    main()
