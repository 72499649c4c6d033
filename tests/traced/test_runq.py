"""Runnable is not waiting: threads that are runnable but not running
(more busy threads than cores) are said to wait for a core, from each
thread's run-queue delay (/proc/self/task/TID/schedstat, read by the
flusher at every flush and by a thread as it leaves: SCHED chunks)."""
import json
import os
import subprocess

from conftest import BUILD, TOOL, report_json


def test_three_cpu_bound_producers_on_one_core(traced):
    """runq_producers: three producer threads, each spinning 4 ms of CPU
    per batch, the process pinned to one core: each is runnable, waiting
    for the core, about two thirds of the time it is not blocked"""
    r = traced([os.path.join(BUILD, "tests", "runq_producers")], load=False)
    assert r.returncode == 0 and r.stdout.startswith("batches 60"), r.stderr
    v = report_json(r.dir)["verdict"]
    assert v["limit"] == "data delivery", v["sentence"]
    prod = v["producers"]
    # the producers named (a producer whose batches all came before the
    # window, the scheduler having run it first, is not one; on a loaded
    # machine, one without CPU samples in the window neither) are loader
    # threads, and, three threads sharing one core, together they waited
    # for it at least as long as they ran: both from the kernel's counters,
    # whatever the load (each thread's read between samples 200 ms apart)
    assert len(prod) <= 3 and all(p["role"] == "loader thread" for p in prod), prod
    assert sum(p["runq_ns"] for p in prod) >= sum(p["cpu_ns"] for p in prod), prod
    for p in prod:
        assert p["runq_ns"] > 0, p
        assert p["runq_ns"] + p["cpu_ns"] + p["io_ns"] + p["lock_ns"] <= p["wall_ns"], p
    # which cause and sentence those figures give (preprocessing, waiting
    # for a core) is judged on planted ones: tests/converter/test_data_cause.py
    assert v["data_cause"] in ("preprocessing", "waiting for a core", "unknown"), v


def test_a_loop_that_waits_for_the_core(traced):
    """runq_producers loop: the main thread spins 4 ms per batch beside two
    producers doing the same, on one core: the loop is the limit, and it
    is runnable, waiting for the core, a good part of its time"""
    r = traced([os.path.join(BUILD, "tests", "runq_producers"), "60", "loop"], load=False)
    assert r.returncode == 0 and r.stdout.startswith("batches 60"), r.stderr
    v = report_json(r.dir)["verdict"]
    assert v["limit"] == "none" and v["feeding_threads"] == [v["pid"]], v["sentence"]
    assert v["runq_ns"] * 5 >= v["wall_ns"], v
    # its own category of the thread time split, beside other CPU
    assert v["runq_ns"] == v["time_ns"]["runq"]
    assert sum(v["time_ns"].values()) == v["wall_ns"]
    assert "The feeding thread is runnable, waiting for a core " in v["detail"], v["detail"]
    # the producers wait for the core too, not for the loop: no such line
    assert "wait for the loop" not in v["detail"]


def test_every_traced_thread_has_runq_samples(traced):
    """each traced thread is sampled at every flush and as it leaves: the
    three producers and the main thread"""
    r = traced([os.path.join(BUILD, "tests", "runq_producers")], load=False)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([TOOL, "dump", "--json", r.dir], capture_output=True, text=True)
    procs = [json.loads(l) for l in out.stdout.splitlines() if '"runq"' in l]
    assert len(procs) == 1
    runq = procs[0]["process"]["runq"]
    assert len(runq) == 4 and all(t["samples"] >= 1 for t in runq.values()), runq
    # the producers waited for the one core: more than nothing
    assert sum(t["last_ns"] > 0 for t in runq.values()) >= 3, runq
