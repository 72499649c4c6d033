"""Lock and wait hooks: only waits that blocked are recorded, exactly once
each, and every lock behaves as it does without the tracer.

Program: tests/progs/lock_prog.c (contention forced by handshakes on atomic
flags: the holder sleeps 20 ms after the waiter announced itself).
"""
import os
import re

import pytest

from conftest import PYTHON, built_prog, skip_under, untraced

ROUNDS = 4
MIN_BLOCK_NS = 5_000_000    # holders keep the lock 20 ms; the rest is scheduling margin
ETIMEDOUT = 110
EDEADLK = 35


def addr(run, name):
    m = re.search(r"^addr %s (0x[0-9a-f]+)$" % name, run.stderr, re.M)
    assert m, run.stderr
    return m.group(1)


def run_both(traced, args, **kw):
    exe = built_prog("lock_prog")
    argv = [exe] + [str(a) for a in args]
    r = traced(argv, **kw)
    u = untraced(argv)
    assert r.returncode == u.returncode == 0, r.stderr
    assert r.stdout == u.stdout
    return r


def lock_events(trace):
    return [e for e in trace.events
            if e["call"].startswith(("pthread_", "sem_"))]


def test_mutex_contention(traced):
    r = run_both(traced, ["mutex", ROUNDS])
    m = addr(r, "mutex")
    recs = r.trace.calls("pthread_mutex_lock")
    assert len(recs) == ROUNDS
    assert all(e["args"]["lock"] == m and e["args"]["ret"] == 0 for e in recs)
    assert all(e["dur_ns"] >= MIN_BLOCK_NS for e in recs), [e["dur_ns"] for e in recs]
    # all on the waiting thread, none on the holder (its relocks were free)
    assert len({e["tid"] for e in recs}) == 1
    assert recs[0]["tid"] != r.trace.procs[0]["pid"]
    assert len(lock_events(r.trace)) == ROUNDS


def test_uncontended_mutex_records_nothing(traced):
    r = run_both(traced, ["uncontended", 100000])
    assert r.stdout == "pairs 100000\n"
    assert lock_events(r.trace) == []


def test_errorcheck_and_recursive_semantics(traced, monkeypatch):
    # `kinds` misuses mutexes on purpose (unlock by a non-owner, unlock when
    # unlocked: the errors are what is checked), which TSan reports; and
    # symbolising that report opens files through the tracer from inside
    # the runtime, where TSan drops synchronisation (a false race follows)
    monkeypatch.setenv("TSAN_OPTIONS", os.environ.get("TSAN_OPTIONS", "") + ":report_mutex_bugs=0")
    r = run_both(traced, ["kinds"])
    assert "errorcheck relock %d " % EDEADLK in r.stdout
    assert "recursive unlock extra -> 1 " in r.stdout
    # The relock of an error-checking mutex by its owner: trylock said EBUSY,
    # so the real pthread_mutex_lock decided (EDEADLK) and that attempt is
    # the one record; nothing else in this program waits.
    recs = lock_events(r.trace)
    assert [(e["call"], e["args"]["ret"]) for e in recs] == [("pthread_mutex_lock", EDEADLK)]


def test_rwlock_contention(traced):
    r = run_both(traced, ["rwlock", ROUNDS])
    a = addr(r, "rwlock")
    rd = r.trace.calls("pthread_rwlock_rdlock")
    wr = r.trace.calls("pthread_rwlock_wrlock")
    assert len(rd) == ROUNDS and len(wr) == ROUNDS
    for e in rd + wr:
        assert e["args"]["lock"] == a and e["args"]["ret"] == 0
        assert e["dur_ns"] >= MIN_BLOCK_NS
    assert len(lock_events(r.trace)) == 2 * ROUNDS


@skip_under(["tsan"], "the runtime, preloaded first, calls pthread_cond_* by dlvsym(GLIBC_2.3.2), "
            "which passes over the library's unversioned wrappers: no waits recorded")
def test_cond_wait_and_timedwait(traced):
    timeouts = 3
    r = run_both(traced, ["cond", ROUNDS, timeouts])
    c = addr(r, "cond")
    assert "cond waits %d\n" % ROUNDS in r.stdout
    assert "cond timeouts %d\n" % timeouts in r.stdout
    w = r.trace.calls("pthread_cond_wait")
    assert len(w) == ROUNDS
    assert all(e["args"]["cond"] == c and e["args"]["ret"] == 0 for e in w)
    assert all(e["dur_ns"] >= MIN_BLOCK_NS for e in w)
    tw = r.trace.calls("pthread_cond_timedwait")
    assert len(tw) == timeouts
    assert all(e["args"]["cond"] == c and e["args"]["ret"] == ETIMEDOUT for e in tw)
    assert all(e["dur_ns"] >= 4_000_000 for e in tw)


def test_sem_wait_blocked_and_available(traced):
    avail = 7
    r = run_both(traced, ["sem", ROUNDS, avail])
    s = addr(r, "sem")
    assert "sem waits ok %d\n" % ROUNDS in r.stdout
    assert "sem available waits ok %d\n" % avail in r.stdout
    recs = r.trace.calls("sem_wait")
    assert len(recs) == ROUNDS
    assert all(e["args"] == {"sem": s, "ret": 0, "err": 0} for e in recs)
    assert all(e["dur_ns"] >= MIN_BLOCK_NS for e in recs)
    assert len(lock_events(r.trace)) == ROUNDS


def test_sem_timedwait_timeout(traced):
    r = run_both(traced, ["semtimed"])
    s = addr(r, "sem")
    assert "sem_timedwait -1 errno %d " % ETIMEDOUT in r.stdout
    assert "sem_timedwait available 0 errno 1234\n" in r.stdout
    recs = r.trace.calls("sem_timedwait")
    assert len(recs) == 1
    assert recs[0]["args"] == {"sem": s, "ret": -1, "err": ETIMEDOUT}
    assert recs[0]["dur_ns"] >= MIN_BLOCK_NS


PY_CONTENTION = r"""
import _thread, os, sys, threading, time
L = int(sys.argv[1]); timed = sys.argv[2] == "timed"
lock = _thread.allocate_lock()
rg, wg = os.pipe(); r1, w1 = os.pipe(); r2, w2 = os.pipe()
def worker():
    # A bare _thread: no threading.Event handshakes, so the only lock this
    # thread waits for is `lock`. It starts a round only when told that the
    # main thread holds the lock again, and it never ends (it is parked in
    # read() at exit), so it never races the interpreter's own locks.
    os.write(w2, b"%d\n" % threading.get_native_id())
    for i in range(L):
        os.read(rg, 1)
        os.write(w1, b"a")
        if timed:
            lock.acquire(timeout=5)
        else:
            lock.acquire()
        lock.release()
        os.write(w2, b"b")
    os.read(rg, 1)
lock.acquire()
_thread.start_new_thread(worker, ())
tid = b""
while not tid.endswith(b"\n"):
    tid += os.read(r2, 1)
for i in range(L):
    os.write(wg, b"g")
    os.read(r1, 1)
    time.sleep(0.02)
    lock.release()
    os.read(r2, 1)
    lock.acquire()
print("worker", int(tid), file=sys.stderr)
print("rounds", L)
"""


@pytest.mark.parametrize("mode,call", [("plain", "sem_wait"), ("timed", "sem_clockwait")])
def test_python_lock_contention(traced, mode, call):
    # CPython 3.11 (Debian) waits for a contended threading.Lock with
    # sem_wait when blocking forever and with sem_clockwait(CLOCK_MONOTONIC)
    # when given a timeout; it never calls sem_timedwait.
    argv = [PYTHON, "-c", PY_CONTENTION, str(ROUNDS), mode]
    r = traced(argv)
    u = untraced(argv)
    assert r.returncode == u.returncode == 0, r.stderr
    assert r.stdout == u.stdout == "rounds %d\n" % ROUNDS
    worker = int(re.search(r"^worker (\d+)$", r.stderr, re.M).group(1))
    sems = [e for e in r.trace.events
            if e["tid"] == worker and e["call"].startswith("sem_")]
    assert len(sems) == ROUNDS, sems
    assert {e["call"] for e in sems} == {call}
    assert len({e["args"]["sem"] for e in sems}) == 1
    assert all(e["args"]["ret"] == 0 and e["dur_ns"] >= MIN_BLOCK_NS for e in sems)
    assert r.trace.count("sem_timedwait") == 0
