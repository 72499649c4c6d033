"""CPU time per thread: the recorder samples every traced thread's CPU
clock at each drain, at the thread's exit and at the process's commit
(FT_CHUNK_CPU); `dump --json` shows per thread the sample count and the
last CPU time. Bounds come from the CPU time the program measured itself
(its threads' CLOCK_THREAD_CPUTIME_ID), never from wall time.
"""
import pytest

from conftest import prog

CPU = prog("exit_cpu")
MS = 1000000


def measured(stdout):
    """{"spin": (tid, cpu_ns), "sleep": (tid, cpu_ns)} as the program printed."""
    out = {}
    for line in stdout.splitlines():
        what, tid, ns = line.split()
        out[what] = (int(tid), int(ns))
    return out


def test_spinning_and_sleeping_threads(traced):
    r = traced([CPU, "200", "200"], env={"FEEDTRACE_FLUSH_MS": "20"})
    assert r.returncode == 0, r.stderr
    m = measured(r.stdout)
    p = r.trace.procs[0]
    cpu = {int(k): v for k, v in p["cpu"].items()}
    spin_tid, spin_ns = m["spin"]
    sleep_tid, sleep_ns = m["sleep"]
    assert spin_tid in cpu and sleep_tid in cpu and p["pid"] in cpu
    # the last sample is the one at thread exit: after the thread's own
    # last reading, and the thread did almost nothing in between
    assert spin_ns <= cpu[spin_tid]["last_ns"] <= spin_ns + 50 * MS
    assert sleep_ns <= cpu[sleep_tid]["last_ns"] <= sleep_ns + 50 * MS
    assert cpu[sleep_tid]["last_ns"] < cpu[spin_tid]["last_ns"] // 10
    # samples while running (20 ms flushes over 200 ms of CPU) and at exit
    assert cpu[spin_tid]["samples"] >= 2
    assert cpu[sleep_tid]["samples"] >= 2


def test_exit_commit_samples_the_last_thread(traced):
    # single thread, _exit: the raw commit drain takes the final sample
    r = traced([CPU, "100", "0", "main_exit"])
    assert r.returncode == 0, r.stderr
    tid, ns = measured(r.stdout)["spin"]
    p = r.trace.procs[0]
    assert tid == p["pid"] and p["end"] == "_exit"
    last = p["cpu"][str(tid)]["last_ns"]
    assert ns <= last <= ns + 50 * MS


def test_threads_without_traced_calls_are_sampled(traced):
    # the threads make no traced call (no ring): pthread_create's start
    # trampoline registers them, and the drains write a sample at their
    # start (0), while they run, and when their start routine returns
    r = traced([CPU, "200", "200", "untouched"], env={"FEEDTRACE_FLUSH_MS": "20"})
    assert r.returncode == 0, r.stderr
    m = measured(r.stdout)
    p = r.trace.procs[0]
    cpu = {int(k): v for k, v in p["cpu"].items()}
    spin_tid, spin_ns = m["spin"]
    sleep_tid, sleep_ns = m["sleep"]
    assert {e["tid"] for e in r.trace.events} == {p["pid"]}   # no call of theirs recorded
    assert spin_ns <= cpu[spin_tid]["last_ns"] <= spin_ns + 50 * MS
    assert sleep_ns <= cpu[sleep_tid]["last_ns"] <= sleep_ns + 50 * MS
    assert cpu[sleep_tid]["last_ns"] < cpu[spin_tid]["last_ns"] // 10
    assert cpu[spin_tid]["samples"] >= 3 and cpu[sleep_tid]["samples"] >= 2
