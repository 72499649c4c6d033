"""Trace file robustness: truncation, corruption, wrong version, empty and
foreign directories, read back through `feedtrace dump`.

The trace: tests/progs/io_read.c `paced` (a known number of 1-byte preads,
paced so that a 16 KiB ring never overflows) with FEEDTRACE_BUF_KB=16, so
the events come in many chunks.
"""
import json
import os
import shutil
import struct
import subprocess

import pytest

from conftest import TOOL, built_prog, clean_env, preload

PREADS = 6000
HEADER = 256
CHUNK_HDR = struct.Struct("<IHHIIII")     # magic type codec stored raw phash hhash
CHUNK_MAGIC = 0x4B435446
EVENTS = 1


def record(tmpdir, n, extra=None, mode="paced"):
    exe = built_prog("io_read")
    data = os.path.join(tmpdir, "input.bin")
    with open(data, "wb") as f:
        f.write(bytes(range(256)) * 4)
    out = os.path.join(tmpdir, "trace")
    env = clean_env()
    env.update({"LD_PRELOAD": preload(), "FEEDTRACE_OUT": out})
    env.update(extra or {})
    r = subprocess.run([exe, mode, str(n), data], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "preads %d\n" % n, r.stderr
    (name,) = os.listdir(out)
    return os.path.join(out, name)


def dump(path):
    """(exit status, preads recovered, stderr, process tally or None)."""
    r = subprocess.run([TOOL, "dump", "--json", "--summary", path],
                       capture_output=True, text=True, timeout=60)
    tally = None
    for line in r.stdout.splitlines():
        tally = json.loads(line)["process"]
    n = tally["calls"].get("pread", 0) if tally else 0
    return r.returncode, n, r.stderr, tally


def chunks(blob):
    """[(offset, type, total length)] of the well-formed file."""
    out, off = [], HEADER
    while off < len(blob):
        magic, typ, codec, stored, raw, ph, hh = CHUNK_HDR.unpack_from(blob, off)
        assert magic == CHUNK_MAGIC
        out.append((off, typ, CHUNK_HDR.size + stored))
        off += CHUNK_HDR.size + stored
    assert off == len(blob)
    return out


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("fmt"))
    path = record(d, PREADS, {"FEEDTRACE_BUF_KB": "16", "FEEDTRACE_FLUSH_MS": "10"})
    blob = open(path, "rb").read()
    rc, n, err, tally = dump(path)
    assert rc == 0 and err == ""
    assert n == PREADS and tally["lost"] == 0 and tally["damaged_chunks"] == 0
    cs = chunks(blob)
    assert sum(1 for c in cs if c[1] == EVENTS) >= 10
    return path, blob, cs


def write_copy(tmp_path, name, data):
    d = tmp_path / name
    d.mkdir()
    p = d / "host.1.ft"
    p.write_bytes(data)
    return str(d), str(p)


def test_truncation(trace, tmp_path):
    path, blob, cs = trace
    first_complete = cs[0][0] + cs[0][2]
    cuts = list(range(0, len(blob), 97)) + [c[0] + c[2] for c in cs] + [len(blob)]
    d = tmp_path / "cut"
    d.mkdir()
    p = str(d / "host.1.ft")
    results = []
    for cut in sorted(set(cuts)):
        with open(p, "wb") as f:
            f.write(blob[:cut])
        rc, n, err, _ = dump(str(d))
        if cut >= first_complete:
            assert rc == 0, (cut, err)
        if cut < len(blob) and rc == 0 and cut not in [c[0] + c[2] for c in cs]:
            assert "offset" in err and p in err, (cut, err)
        results.append((cut, n))
    counts = [n for _, n in results]
    assert counts == sorted(counts), "recovered reads decreased with a longer file"
    assert results[-1] == (len(blob), PREADS)
    assert counts[0] == 0


def chunk_records(blob, cs, i, tmp_path):
    """Reads recorded in chunk i: recovered up to its end minus up to its start."""
    off, _, ln = cs[i]
    _, a = write_copy(tmp_path, "a%d" % i, blob[:off])
    _, b = write_copy(tmp_path, "b%d" % i, blob[:off + ln])
    return dump(b)[1] - dump(a)[1]


@pytest.mark.parametrize("where", ["payload", "header"])
def test_flipped_bytes_in_one_chunk(trace, tmp_path, where):
    path, blob, cs = trace
    ev = [i for i, c in enumerate(cs) if c[1] == EVENTS]
    i = ev[len(ev) // 2]
    off, _, ln = cs[i]
    lost = chunk_records(blob, cs, i, tmp_path)
    assert lost > 0
    bad = bytearray(blob)
    if where == "payload":
        for k in range(off + CHUNK_HDR.size + 5, off + CHUNK_HDR.size + 9):
            bad[k] ^= 0x5A
    else:
        bad[off + 12] ^= 0x01           # raw_size: the header hash no longer matches
    d, p = write_copy(tmp_path, "flip-" + where, bytes(bad))
    rc, n, err, tally = dump(d)
    assert rc == 0
    assert n == PREADS - lost
    assert tally["damaged_chunks"] == 1
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert p in lines[0] and ("offset %d:" % off) in lines[0]


def test_wrong_version(trace, tmp_path):
    path, blob, cs = trace
    bad = bytearray(blob)
    struct.pack_into("<H", bad, 8, 99)
    d, p = write_copy(tmp_path, "ver", bytes(bad))
    rc, n, err, tally = dump(d)
    assert rc != 0 and tally is None
    assert p in err and "version" in err and "99" in err
    # next to a good file: the good one is read, the bad one named
    shutil.copy(path, os.path.join(d, "host.2.ft"))
    rc, n, err, tally = dump(d)
    assert rc == 0 and n == PREADS
    assert p in err and "version" in err


def test_empty_and_foreign_dirs(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = subprocess.run([TOOL, "dump", "--json", str(empty)], capture_output=True, text=True)
    assert r.returncode != 0 and r.stdout == ""
    assert str(empty) in r.stderr and "no trace files" in r.stderr

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("hello\n")
    (foreign / "data.bin").write_bytes(os.urandom(4096))
    (foreign / "sub.ft").mkdir()
    r = subprocess.run([TOOL, "dump", "--json", str(foreign)], capture_output=True, text=True)
    assert r.returncode != 0 and r.stdout == ""
    assert str(foreign) in r.stderr

    (foreign / "junk.ft").write_bytes(os.urandom(4096))
    (foreign / "short.ft").write_bytes(b"FEEDTRC\n")
    r = subprocess.run([TOOL, "dump", "--json", str(foreign)], capture_output=True, text=True)
    assert r.returncode != 0 and r.stdout == ""
    assert "junk.ft" in r.stderr and "not a feedtrace file" in r.stderr
    assert "short.ft" in r.stderr and "too short" in r.stderr

    missing = tmp_path / "missing"
    r = subprocess.run([TOOL, "dump", "--json", str(missing)], capture_output=True, text=True)
    assert r.returncode != 0 and str(missing) in r.stderr


def test_bytes_per_event(tmp_path):
    n = 1_000_000
    path = record(str(tmp_path), n, mode="many")
    size = os.path.getsize(path)
    rc, got, err, tally = dump(path)
    assert rc == 0 and err == ""
    print("\n1M preads: file %d bytes, %d records, %d lost: %.2f bytes per recorded event"
          % (size, tally["records"], tally["lost"], size / max(1, tally["records"])))
    assert got + tally["lost"] == n
