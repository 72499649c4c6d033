"""What the tracer takes from a process (docs/RELIABILITY.md, "What the
tracer takes from a process"): descriptor numbers and the count of files
under RLIMIT_NOFILE, pthread keys, and the single thread that a user
namespace needs. Each test compares an untraced run with a traced one,
byte for byte (tests/progs/integ_resources.c)."""
import os

import pytest

from conftest import SANITIZER, clean_env, nofile, prog, untraced

RES = prog("integ_resources")


def plain(argv, **kw):
    e = clean_env("LD_PRELOAD")
    return untraced(argv, env=e, **kw)


@pytest.mark.parametrize("limits", [None, (16, 64), (16, 16)])
def test_first_descriptor(traced, limits):
    """The first open returns 3 as untraced, whatever the limit: the trace
    file is out of the way (at the soft limit, or 700, or the highest free
    number below a low limit)."""
    lim = nofile(*limits) if limits else None
    u = plain([RES, "first"], preexec_fn=lim)
    r = traced([RES, "first"], preexec_fn=lim)
    assert u.stdout == "first fd 3\n"
    assert (r.returncode, r.stdout, r.stderr) == (0, u.stdout, "")
    assert r.trace.count("open", path="/dev/null", fd=3) == 1


def test_open_count_under_rlimit_nofile_16(traced):
    """Soft limit 16 below the hard one: the program opens exactly as many
    files as untraced (13: 3 to 15, past 0-2 and whatever the harness left; here
    none), the trace file sitting at 16, beyond the program's reach."""
    lim = nofile(16, 64)
    u = plain([RES, "nofile"], preexec_fn=lim, close_fds=True)
    r = traced([RES, "nofile"], preexec_fn=lim)
    assert u.stdout == "opened 13 then Too many open files\n"
    assert (r.returncode, r.stdout, r.stderr) == (0, u.stdout, "")
    opens = r.trace.calls("open", path="/dev/null")
    assert len(opens) == 14 and [o["args"].get("fd") for o in opens[:13]] == list(range(3, 16))


def test_open_count_when_hard_equals_soft(traced):
    """Soft and hard limit both 16 (`ulimit -n 16`): no number beyond the
    program's reach exists, and the trace file takes one of its 16
    (documented in docs/RELIABILITY.md): one open fewer than untraced."""
    lim = nofile(16, 16)
    u = plain([RES, "nofile"], preexec_fn=lim)
    r = traced([RES, "nofile"], preexec_fn=lim)
    assert u.stdout == "opened 13 then Too many open files\n"
    assert (r.returncode, r.stdout, r.stderr) == (0, "opened 12 then Too many open files\n", "")


def test_every_pthread_key(traced):
    """The program gets all PTHREAD_KEYS_MAX (1024) keys: thread exit is
    seen without a key. A thread made afterwards still has its read, open
    and close recorded."""
    u = plain([RES, "keys"])
    r = traced([RES, "keys"])
    if not SANITIZER:               # a sanitizer's runtime takes one itself
        assert u.stdout == "keys 1024\n"
    assert (r.returncode, r.stdout, r.stderr) == (0, u.stdout, "")
    [p] = r.trace.procs
    assert (p["end"], p["lost"], p["threads"]) == ("exit", 0, 1)
    assert r.trace.count("read", path="/proc/self/comm") == 1


def test_threads_that_leave_every_way(traced):
    """Threads that leave by return, pthread_exit and cancellation: each
    one's records are all there (its slot is freed only once the kernel
    says its tid is gone)."""
    n = 30
    r = traced([RES, "threads", str(n)])
    assert (r.returncode, r.stdout, r.stderr) == (0, "threads %d\n" % n, "")
    [p] = r.trace.procs
    # the main thread records too when its wait for the cancelled thread's
    # read blocked (sem_wait)
    main = 1 if any(e["tid"] == p["pid"] for e in r.trace.events) else 0
    assert (p["end"], p["lost"], p["threads"]) == ("exit", 0, n + main)
    reads = r.trace.calls("read", path="/proc/self/comm")
    assert len(reads) == n and len({e["tid"] for e in reads}) == n


def test_unshare_user_namespace(traced):
    """unshare(CLONE_NEWUSER) needs a single-threaded caller: it succeeds
    traced exactly when it does untraced (the flusher stops for the call),
    and the trace goes on after it (a read, a thread)."""
    u = plain([RES, "unshare"])
    if u.stdout != "unshare 0 ok\n":
        pytest.skip("this kernel refuses an unprivileged user namespace untraced too: "
                    + u.stdout.strip())
    r = traced([RES, "unshare"])
    assert (r.returncode, r.stdout, r.stderr) == (0, u.stdout, "")
    [p] = r.trace.procs
    assert (p["end"], p["lost"]) == ("exit", 0)
    assert r.trace.count("read", path="/proc/self/comm") == 2


def test_unshare_command(traced):
    """`unshare -U true` (util-linux) exits 0 traced as untraced."""
    if not os.path.exists("/usr/bin/unshare"):
        pytest.skip("no /usr/bin/unshare")
    u = plain(["/usr/bin/unshare", "-U", "true"])
    if u.returncode != 0:
        pytest.skip("unshare -U fails untraced too: " + u.stderr.strip())
    r = traced(["/usr/bin/unshare", "-U", "true"])
    assert (r.returncode, r.stderr) == (0, "")
    assert sorted(p["end"] for p in r.trace.procs) == ["exec", "exit"]
