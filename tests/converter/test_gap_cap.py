"""The cap on the launch gaps a report keeps (FT_REPORT_MAX_GAPS, 1 000;
fk_gap.c's `cap` hook, report_model.c): past it, a stream gap replaces the
shortest stream gap kept if it is longer, a thread's gap is left out; every
one is counted (`launch_gaps_left_out`). Synthetic traces (tests/ftgen.py)
whose gaps have known, distinct lengths."""
import ftgen
from test_convert import MS
from test_report import kinds, report

CAP = 1000


def steps(path, lengths, fresh_stream):
    """Per gap: 3 launches, then untraced CPU work for its length. With
    fresh_stream each step launches on a stream of its own, so only the
    thread's launches pause (thread gaps); else all on one (stream gaps)."""
    w = ftgen.TraceFile(path, 100, ["gaps"])
    w.thread(100, "main")
    t = w.start + MS
    for k, n in enumerate(lengths + [0]):
        for _ in range(3):
            w.event(100, "CU_LAUNCH_KERNEL", t, 5_000, sym="cuLaunchKernel", kernel="k",
                    sync=0, stream=0x1000 + k if fresh_stream else 0x10)
            t += 10_000
        t += n
    return w


def write(tmp_path, name, lengths, fresh_stream):
    d = tmp_path / name
    d.mkdir()
    steps(str(d / "host.100.ft"), lengths, fresh_stream).close()
    return str(d)


def test_the_longest_stream_gaps_are_kept(tmp_path):
    # 1 010 gaps of 2 ms + 0..1009 us, in a scrambled order: the longest
    # come early and late, so later ones must replace shorter kept ones
    n = CAP + 10
    lengths = [2 * MS + (k * 7919) % n * 1_000 for k in range(n)]
    rep = report(write(tmp_path, "stream", lengths, False))
    gaps = kinds(rep, "launch_gap")
    assert {g["scope"] for g in gaps} == {"stream"}
    assert rep["launch_gaps_left_out"] == 10
    # a gap runs from the last launch's end (5 us in) to the next launch
    assert sorted(g["lost_ns"] for g in gaps) == sorted(x + 5_000 for x in lengths)[-CAP:]


def test_thread_gaps_past_the_cap_are_left_out(tmp_path):
    # growing gaps: the last five, the longest, come past the cap
    n = CAP + 5
    lengths = [2 * MS + k * 1_000 for k in range(n)]
    rep = report(write(tmp_path, "thread", lengths, True))
    gaps = kinds(rep, "launch_gap")
    assert {g["scope"] for g in gaps} == {"thread"}
    assert rep["launch_gaps_left_out"] == 5
    assert sorted(g["lost_ns"] for g in gaps) == [x + 5_000 for x in lengths[:CAP]]
