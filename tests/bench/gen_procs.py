"""gen_procs.py: a synthetic trace directory of many short processes, as
a shell loop of short commands leaves: one main process (pid 1000, `bash
loop.sh`) forks N children; each child is a `sh -c` image that exec'd
into `cat /data/I.txt` (two files of one pid: HOST.PID.ft, HOST.PID.1.ft),
which reads its file once. With workers, the main process is `python3
train.py` and its N children are its workers (the same command line, one
image each), each reading its file. For tests/converter/test_report_scale.py and
`make bench` (scripts/bench_procs.sh).

    python3 tests/bench/gen_procs.py DIR N [workers]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ftgen  # noqa: E402

START = 1_000_000_000_000
US = 1_000
MS = 1_000_000


def child_pid(i):
    return 2000 + i


PY = ["python3", "train.py"]


def gen(d, n, workers=False):
    os.makedirs(d, exist_ok=True)
    end = START + (n + 2) * MS
    w = ftgen.TraceFile(os.path.join(d, "host.1000.ft"), 1000,
                        PY if workers else ["bash", "loop.sh"], start_ns=START, ppid=1)
    w.thread(1000, "python3" if workers else "bash", main=True)
    for i in range(n):
        t = START + (i + 1) * MS
        w.event(1000, "FORK", t, 50 * US, child=child_pid(i))
    w.event(1000, "READ", end, 10 * US, fd=3, req=100, ret=100, path="/data/loop.sh")
    w.close()
    for i in range(n):
        pid, t = child_pid(i), START + (i + 1) * MS + 60 * US
        if workers:
            x = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid, PY, start_ns=t,
                                ppid=1000)
            x.thread(pid, "python3", main=True)
            x.event(pid, "READ", t + 300 * US, 20 * US, fd=3, req=4096, ret=4096,
                    path="/data/%d.bin" % i)
            x.close()
            continue
        sh = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid,
                             ["sh", "-c", "cat /data/%d.txt" % i], start_ns=t, ppid=1000)
        sh.thread(pid, "sh", main=True)
        sh.event(pid, "EXEC", t + 100 * US, 0, path="/usr/bin/cat")
        sh.close()
        cat = ftgen.TraceFile(os.path.join(d, "host.%d.1.ft" % pid), pid,
                              ["cat", "/data/%d.txt" % i], start_ns=t + 200 * US, ppid=1000)
        cat.thread(pid, "cat", main=True)
        cat.event(pid, "READ", t + 300 * US, 20 * US, fd=3, req=4096, ret=10,
                  path="/data/%d.txt" % i)
        cat.close()


if __name__ == "__main__":
    gen(sys.argv[1], int(sys.argv[2]), sys.argv[3:] == ["workers"])
