"""Lost processes on a synthetic trace (tests/ftgen.py): a fork record whose
child has no file in the directory is counted as lost, in `report`,
`report --json` and `dump --json` (children_untraced). Real runs on a full
disk or with children that drop privileges: tests/traced/test_lost_children.py."""
import ftgen
from conftest import report_json
from test_lost_children import MS, START, US, dump_procs, lost_lines


def test_synthetic_forks_without_files(tmp_path):
    """Process 100 forked 200, 201 and 202; only 200 left a file (and an
    exec'd image of it): 2 children left no trace, counted on 100."""
    d = tmp_path / "t"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "h.100.ft"), 100, ["prog"], start_ns=START)
    w.thread(100, "prog", main=True)
    for i, pid in enumerate((200, 201, 202)):
        w.event(100, "FORK", START + (i + 1) * MS, 50 * US, child=pid)
    w.close()
    for name, cmd, start in (("h.200.ft", ["prog"], 2), ("h.200.1.ft", ["cat"], 3)):
        c = ftgen.TraceFile(str(d / name), 200, cmd, start_ns=START + start * MS, ppid=100)
        c.thread(200, cmd[0], main=True)
        c.event(200, "READ", START + start * MS + 500 * US, 10 * US, fd=3, req=1, ret=1,
                path="/x")
        c.close()
    procs = sorted((p["pid"], p["cmdline"], p["children_untraced"]) for p in dump_procs(str(d)))
    assert procs == [(100, "prog", 2), (200, "cat", 0), (200, "prog", 0)]
    assert report_json(str(d))["losses"]["children_untraced"] == 2
    assert [x for x in lost_lines(str(d)) if "left no trace" in x] == [
        "LOST 2 processes forked by traced processes left no trace (1 of 3 processes): their "
        "trace file could not be made (FEEDTRACE_OUT not writable to them, e.g. after "
        "setuid; disk full): their calls are missing"]
