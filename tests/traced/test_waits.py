"""Waits for another thread or process (shim/wait.c): poll, ppoll, select,
pselect and epoll recorded only when they blocked, with the descriptors
waited on and their kinds; reads of pipes, sockets and eventfds recorded
as pipe reads (never file I/O); recvmsg on a socketpair passing
descriptors; descriptors' kinds from the calls that made them. The
writer in tests/progs/wait_prog.c writes only once the waiter sleeps in
the system call, so every wait blocked: the counts are exact."""
import pytest

from conftest import prog, skip_under, untraced

N = 12
PIPE, SOCKET, EVENTFD, EPOLL = 2, 3, 4, 5
WAIT = prog("wait_prog")


def parent(t):
    [p] = [p for p in t.procs if p["end"] == "exit"]       # the child _exits
    return p["pid"]


def pipe_reads(t, pid, fd=None):
    return [e for e in t.calls("read", pid=pid) if "kind" in e["args"] and
            (fd is None or e["args"]["fd"] == fd)]


@pytest.mark.parametrize("mode,call,timeout", [
    ("poll", "poll", 10000), ("ppoll", "ppoll", 10000), ("select", "select", 10000),
    ("pselect", "pselect", 10000)])
def test_blocked_waits_on_a_pipe(traced, mode, call, timeout):
    r = traced([WAIT, mode, str(N)])
    assert r.returncode == 0 and r.stdout == "%s ok %d\n" % (mode, N), r.stderr
    assert r.stdout == untraced([WAIT, mode, str(N)]).stdout
    t, pid = r.trace, parent(r.trace)
    [made] = t.calls("pipe", pid=pid)
    rfd = made["args"]["fd0"]
    assert (made["args"]["kind"], made["args"]["ret"]) == (PIPE, 0)
    waits = t.calls(call, pid=pid)
    assert len(waits) == N
    for w in waits:
        a = w["args"]
        assert (a["ret"], a["nfds"], a["timeout"], a["fd0"], a["fd1"]) == (1, 1, timeout, rfd, -1)
        assert a["kinds"] == "0x2"
    reads = pipe_reads(t, pid, rfd)
    assert len(reads) == N and all(e["args"]["kind"] == PIPE and e["args"]["ret"] == 1
                                   for e in reads)
    assert not [e for e in t.calls("read", pid=pid) if "path" in e["args"]
                and e["args"]["fd"] == rfd]                 # never file I/O


def test_epoll_wait_names_the_epoll_descriptor(traced):
    r = traced([WAIT, "epoll", str(N)])
    assert r.returncode == 0 and r.stdout == "epoll ok %d\n" % N, r.stderr
    t, pid = r.trace, parent(r.trace)
    [ep] = [e for e in t.calls("pipe", pid=pid) if e["args"]["kind"] == EPOLL]
    waits = t.calls("epoll_wait", pid=pid) + t.calls("epoll_pwait", pid=pid)
    assert len(waits) == N
    assert all((w["args"]["fd0"], w["args"]["kinds"], w["args"]["nfds"], w["args"]["ret"]) ==
               (ep["args"]["fd0"], "0x5", 1, 1) for w in waits)


def test_blocking_pipe_read(traced):
    r = traced([WAIT, "read", str(N)])
    assert r.returncode == 0, r.stderr
    t, pid = r.trace, parent(r.trace)
    rfd = t.calls("pipe", pid=pid)[0]["args"]["fd0"]
    assert len(pipe_reads(t, pid, rfd)) == N
    assert t.count("poll", pid=pid) == 0


def test_recvmsg_passing_descriptors(traced):
    r = traced([WAIT, "recvmsg", str(N)])
    assert r.returncode == 0 and r.stdout == "recvmsg ok %d\n" % N, r.stderr
    t, pid = r.trace, parent(r.trace)
    [made] = t.calls("pipe", pid=pid)                      # socketpair
    assert made["args"]["kind"] == SOCKET
    recvs = t.calls("recvmsg", pid=pid)
    assert len(recvs) == N
    assert all((e["args"]["fd"], e["args"]["kind"], e["args"]["req"], e["args"]["ret"]) ==
               (made["args"]["fd0"], SOCKET, 1, 1) for e in recvs)


def test_thread_waits_on_an_eventfd(traced):
    r = traced([WAIT, "eventfd", str(N)])
    assert r.returncode == 0 and r.stdout == "eventfd ok %d\n" % N, r.stderr
    t = r.trace
    pid = t.procs[0]["pid"]
    [made] = t.calls("pipe", pid=pid)
    assert (made["args"]["kind"], made["args"]["fd1"]) == (EVENTFD, -1)
    reads = pipe_reads(t, pid, made["args"]["fd0"])
    assert len(reads) == N and {e["tid"] for e in reads} == {pid}
    assert all(e["args"]["kind"] == EVENTFD and e["args"]["ret"] == 8 for e in reads)


def test_a_wait_that_found_data_ready_is_not_recorded(traced):
    r = traced([WAIT, "ready", str(N)])
    assert r.returncode == 0 and r.stdout == "ready ok %d\n" % N, r.stderr
    t = r.trace
    pid = t.procs[0]["pid"]
    assert t.count("poll", pid=pid) == 0
    assert len(pipe_reads(t, pid)) == N


@skip_under(["asan", "tsan"], "the sanitizer's own open/readv interceptors read the "
            "unreadable path first and crash, traced or not")
def test_rejected_pointers_give_efault_as_untraced(traced):
    want = "efault open=14 openat=14 fopen=14 readv=14\n"
    assert untraced([WAIT, "efault", "1"]).stdout == want
    r = traced([WAIT, "efault", "1"])
    assert (r.returncode, r.stdout) == (0, want), r.stderr
    opens = [e for e in r.trace.events if e["call"] in ("open", "openat", "fopen")
             and e["args"].get("fd") == -14]
    assert len(opens) == 3 and all(e["args"]["path"] == "" for e in opens)
    [rv] = r.trace.calls("readv")
    assert (rv["args"]["req"], rv["args"]["ret"]) == (0, -14)
