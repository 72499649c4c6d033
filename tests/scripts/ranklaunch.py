"""ranklaunch.py: a stand-in for torchrun on one host (Debian's torchrun
fails on Python 3.11), for tests: starts N copies of a command, each with
the environment torchrun gives a rank (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID), plus
per-rank variables, prints "fact rank R PID" for each, and exits with the
worst status.

    ranklaunch.py N [--rank-env R:NAME=VALUE]... -- CMD [ARGS...]
"""
import os
import socket
import subprocess
import sys


def main(argv):
    n = int(argv[0])
    extra = {}
    i = 1
    while argv[i] != "--":
        assert argv[i] == "--rank-env", argv[i]
        r, kv = argv[i + 1].split(":", 1)
        name, value = kv.split("=", 1)
        extra.setdefault(int(r), {})[name] = value
        i += 2
    cmd = argv[i + 1:]
    with socket.socket() as s:          # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(n):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(n),
                   LOCAL_WORLD_SIZE=str(n), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   TORCHELASTIC_RUN_ID="ranklaunch-%d" % os.getpid())
        env.update(extra.get(r, {}))
        procs.append(subprocess.Popen(cmd, env=env))
        print("fact rank %d %d" % (r, procs[-1].pid), flush=True)
    return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
