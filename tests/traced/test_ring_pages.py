"""The pages the tracer writes for the program's threads: a ring's first
pages are faulted as its thread attaches, the rest of the ring ahead of
the writer and the string table's first part by the flusher (ring.c,
strtab.c, docs/ARCHITECTURE.md "Memory"). tests/progs/ring_pages.c.
Records and strings stay whole: across threads, ring laps, the string
table's three parts, and a fork child that interns its own strings and
names its parent's."""
import re

from conftest import built_prog, skip_under

PROG = built_prog("ring_pages")


@skip_under(["asan", "tsan"], "the ring's shadow pages fault in the hook")
def test_a_threads_first_records_take_no_page_fault(traced):
    # 400 one-slot records after the first (the open's, with its call
    # site, and a read's) fit the 16 KiB faulted at attach; the code
    # before took a fault every 128 records (3 here)
    n = 400
    r = traced([PROG, "start", str(n)])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "faults 0\n"
    (p,) = r.trace.procs
    assert p["lost"] == 0 and p["damaged_chunks"] == 0
    reads = r.trace.calls("read")
    assert len(reads) == n + 1
    assert len({e["tid"] for e in reads}) == 1 and reads[0]["tid"] != p["pid"]
    assert all(e["args"]["path"] == "/dev/zero" and e["args"]["ret"] == 1 for e in reads)


def test_records_and_strings_whole_across_threads_and_fork(traced, tmp_path):
    # 3 threads x 15 000 new paths: more than the table's first part
    # holds (the rest go to the near and far parts); 40 000 reads a
    # thread: more than a lap of the 1 MiB ring; then a fork child does
    # the same with paths of its own and ten of each parent thread's
    T, P, R = 3, 15000, 40000
    base = str(tmp_path / "nope")
    r = traced([PROG, "many", base, str(T), str(P), str(R)],
               env={"FEEDTRACE_FLUSH_MS": "10"}, timeout=300)
    assert r.returncode == 0, r.stderr
    pids = dict(l.split() for l in r.stdout.splitlines())
    assert set(pids) == {"parent", "child"}
    for side in ("parent", "child"):
        pid = int(pids[side])
        p = r.trace.proc(pid)
        assert p["damaged_chunks"] == 0 and p["strings_lost"] == 0
        own = "c" if side == "child" else "p"
        made = T * (P + 1 + R + 1) + (T * 10 if side == "child" else 1)
        # a full ring drops records, counted: none goes missing uncounted
        assert sum(p["calls"].values()) + p["lost"] == made
        if p["lost"] == 0:
            assert p["calls"]["open"] == T * (P + 1 + (10 if side == "child" else 0))
            assert p["calls"]["read"] == T * R
        threads = {}
        for e in r.trace.calls(pid=pid):
            if e["call"] == "read":
                assert e["args"]["path"] == "/dev/zero" and e["args"]["ret"] == 1
            elif e["call"] == "open" and e["args"]["path"] != "/dev/zero":
                threads.setdefault(e["tid"], []).append(e["args"]["path"])
        assert len(threads) == T
        seen = set()
        for tid, paths in threads.items():
            m = re.fullmatch(re.escape(base) + r"/%s/t(\d)/0" % own, paths[0])
            assert m, paths[0]
            i = int(m.group(1))
            seen.add(i)
            want = ["%s/%s/t%d/%d" % (base, own, i, j) for j in range(P)]
            if side == "child":
                want += ["%s/p/t%d/%d" % (base, i, j) for j in range(10)]
            if p["lost"] == 0:
                assert paths == want
            else:                       # in order, each one right
                it = iter(want)
                assert all(any(s == w for w in it) for s in paths)
        assert seen == set(range(T))
