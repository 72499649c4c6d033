"""The reader's side of the recorder's clock (docs/FORMAT.md, CLOCK): a
trace whose ticks fell back to clock_gettime part way is converted in its
two segments, each on its own line, onto one timeline. The recorder's
side, on traced programs: tests/traced/test_clock.py."""


def test_reader_converts_the_two_segments(tmp_path):
    """A synthetic file (tests/ftgen.py) whose TSC parted: ticks up to the
    fall-back's pair convert on the line from the header's pair to it,
    later ticks on the line from it to the latest pair; durations at
    their segment's rate. Exact values."""
    import json
    import struct
    import subprocess
    from conftest import TOOL
    from ftgen import TraceFile
    M0, T0 = 1_000_000_000_000, 1000
    F_ticks, F_mono = T0 + 700_000_000, M0 + 300_000_000     # 7e8 ticks in 3e8 ns
    L_ticks, L_mono = F_ticks + 800_000_000, M0 + 700_000_000  # then 2 ticks a ns
    w = TraceFile(str(tmp_path / "h.100.ft"), pid=100, start_ns=M0)
    w.header = w.header[:12] + struct.pack("<I", 1) + w.header[16:32] + \
        struct.pack("<Q", T0) + w.header[40:]
    w.thread(100, "main", main=True)
    w.event(100, "READ", T0 + 210_000_000, 7000, fd=3, path="/a", req=1, ret=1)
    w.event(100, "READ", F_ticks + 200_000_000, 2000, fd=3, path="/b", req=1, ret=1)
    body = b"".join(rec for _ts, _tid, rec in sorted(w.events))
    chunks = [c for c in w.chunks() if c[0] not in (1, 4)]
    chunks.insert(-1, (1, struct.pack("<iIQQQ", 100, len(body) // 32, 0, 0, 0) + body))
    chunks.insert(-1, (4, struct.pack("<QQQQ", F_ticks, F_mono, 0, 5_000_000)))
    chunks.insert(-1, (4, struct.pack("<QQQQ", L_ticks, L_mono, 0, 0)))
    w.close(chunks=chunks)
    r = subprocess.run([TOOL, "dump", "--json", str(tmp_path)], capture_output=True,
                       text=True, check=True)
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    ev = [(e["args"]["path"], e["ts_ns"], e["dur_ns"]) for e in lines if "call" in e]
    assert ev == [("/a", 90_000_000, 3000), ("/b", 400_000_000, 1000)]
    (p,) = [e["process"] for e in lines if "process" in e]
    assert p["clock_fallbacks"] == 1 and p["clock_kind"] == 1
