"""`feedtrace convert` of traces of real programs (tests/progs/conv_*.c) into
Perfetto: exact slice and finding counts checked with
tests/check_pftrace.py, then loaded in Perfetto's trace processor
(tests/perfetto_load.sh; skipped only when it exits 77). Synthetic CUDA
runs: tests/converter/test_convert.py."""
import os

import pytest

from conftest import prog
from test_convert import check_names, convert, load


@pytest.fixture
def files50(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    for i in range(50):
        (d / ("f%03d" % i)).write_bytes(os.urandom(51200))
    return str(d)


def test_storm_program(traced, files50):
    run = traced([prog("conv_storm"), files50, "50", "100", "512"])
    assert run.returncode == 0 and run.stdout == "read 2560000 bytes\n"
    out, r = convert(run.dir)
    assert "1 findings" in r.stderr
    check_names(out, {"read": 5000, "open": 50, "close": 50, "small-read storm": 1,
                      "launch gap": 0, "lock contention": 0})
    rows = load(out, "select a.key as k, a.display_value as v from slice s join args a "
                     "using(arg_set_id) where s.name = 'small-read storm'",
                "select t.name as track, count(*) as n from slice s join track t "
                "on s.track_id = t.id where s.name = 'small-read storm' group by 1",
                "select count(*) as n from process where name glob '*conv_storm*'")
    args = {r["k"]: r["v"] for r in rows if "k" in r}
    assert args["debug.reads"] == "5000" and args["debug.files"] == "50"
    assert args["debug.bytes"] == str(5000 * 512)
    assert args["debug.<1K"] == "5000" and "debug.<512" not in args   # 512 B reads
    assert {"track": "small-read storms", "n": 1} in rows
    assert {"n": 1} in rows


def test_fixed_twin_has_no_storm(traced, files50):
    run = traced([prog("conv_storm"), files50, "50", "1", "262144"])
    assert run.stdout == "read 2560000 bytes\n"
    out, r = convert(run.dir)
    check_names(out, {"read": 50, "small-read storm": 0})
    assert "0 findings" in r.stderr


def test_lock_contention(traced):
    run = traced([prog("conv_lock"), "contended", "7"])
    assert run.stdout == "contended 7\n"
    out, _ = convert(run.dir)
    check_names(out, {"pthread_mutex_lock": 7})
    rows = load(out, "select s.id as id, a.key as k, a.display_value as v from slice s "
                     "join args a using(arg_set_id) where s.name = 'lock contention'",
                # the traced process's threads (not its untraced parent's)
                "select count(*) as n from thread t join process p using(upid) "
                "where t.tid != 0 and p.name is not null")
    slices = {}
    for r in rows:
        if "k" in r:
            slices.setdefault(r["id"], {})[r["k"]] = r["v"]
    # the 7 waits, 5 ms apart on a quiet machine, are one burst, one slice;
    # with both cores busy a gap can pass the bursts' limit: however many
    # slices, they hold the 7 waits between them (how waits make bursts:
    # test_finding_slices_span_their_bursts, on a synthetic trace)
    assert slices and sum(int(a["debug.waits_here"]) for a in slices.values()) == 7
    for a in slices.values():
        assert a["debug.waits"] == "7" and a["debug.call"] == "pthread_mutex_lock"
        assert "debug.suggestion" in a and "debug.lost_ns" not in a
    assert {"n": 2} in rows


def test_no_contention_no_finding(traced):
    run = traced([prog("conv_lock"), "free", "1000"])
    out, _ = convert(run.dir)
    check_names(out, {"pthread_mutex_lock": 0, "lock contention": 0})

