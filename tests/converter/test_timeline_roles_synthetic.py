"""The timeline's processes numbered by role in fork order (issue 13), on
synthetic traces (tests/ftgen.py): workers in the order they were
forked, a pid the kernel reused numbered again at each fork. Real
programs: tests/traced/test_timeline_roles.py."""
import os

from test_convert import load
from test_timeline_roles import QUERY, convert


def forked_run(d, forks, children):
    """Synthetic: the main process 300 (python3 train.py) forks the pids
    forks at 1 ms, 2 ms, ... after its start (its fork records); each
    child (file name part, pid, ms) starts its trace that many ms after."""
    import ftgen
    MS = 1_000_000
    t0 = 1_000_000_000_000
    main = ftgen.TraceFile(os.path.join(d, "h.300.ft"), 300, ["python3", "train.py"],
                           start_ns=t0, ppid=1)
    main.thread(300, "python3", main=True)
    for k, child in enumerate(forks):
        main.event(300, "FORK", t0 + (k + 1) * MS, 100_000, child=child, flusher_busy=0)
    main.event(300, "READ", t0 + 30 * MS, 1000, fd=3, path="/data/x", req=4096, ret=4096)
    main.close()
    for name, child, ms in children:
        w = ftgen.TraceFile(os.path.join(d, "h.%s.ft" % name), child, ["python3", "train.py"],
                            start_ns=t0 + ms * MS, ppid=300)
        w.thread(child, "python3", main=True)
        w.event(child, "READ", t0 + (ms + 1) * MS, 1000, fd=3, path="/data/y", req=4096, ret=4096)
        w.close()


def test_workers_numbered_in_fork_order(tmp_path):
    """The main process forks pids 301, 302, 303 in that order, but their
    traces start in the opposite order (each child starts its trace in its
    own fork handler: under load the last child forked may get there
    first). Numbered as forked, as PyTorch numbers its workers; a fourth
    worker the main recorded no fork of (304) comes after them, by its
    start. Was: by start, so 303 was worker 0."""
    forked_run(str(tmp_path), [301, 302, 303],
               [("301", 301, 9), ("302", 302, 7), ("303", 303, 5), ("304", 304, 8)])
    out = str(tmp_path / "t.pftrace")
    convert(str(tmp_path), out)
    got = {x["pid"]: (x["name"] or "").replace("\xa0", " ") for x in load(out, QUERY)}
    assert got[300] == "main: python3 train.py"
    assert [got[p] for p in (301, 302, 303, 304)] == [
        "DataLoader worker %d (pid %d)" % (n, p) for n, p in enumerate((301, 302, 303, 304))]


def test_reused_pid_numbered_at_each_fork(tmp_path):
    """Pid 302 is forked twice (reused after its first child ended): its
    two traces, in start order, are the second and the fourth fork, so
    workers 1 and 3, not one number twice. Trace processor keeps one
    process per pid, so the names are read from the ProcessTree packet."""
    from check_pftrace import DEFAULT_PROTO, decode_file
    forked_run(str(tmp_path), [301, 302, 303, 302],
               [("301", 301, 9), ("302", 302, 7), ("303", 303, 5), ("302.2", 302, 20),
                ("304", 304, 8)])
    out = str(tmp_path / "t.pftrace")
    convert(str(tmp_path), out)
    [tree] = [p["process_tree"][0] for p in decode_file(out, DEFAULT_PROTO) if "process_tree" in p]
    names = sorted(q["cmdline"][0].replace("\xa0", " ") for q in tree["processes"]
                   if q["pid"] != [300])
    assert names == ["DataLoader worker %d (pid %d)" % (n, p)
                     for n, p in enumerate((301, 302, 303, 302, 304))], names
