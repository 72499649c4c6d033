"""life_pyfork.py FILE NP NC CODE: NP reads, os.fork(); the child does NC reads
and leaves with os._exit(CODE) (no atexit, no destructors); the parent waits."""
import atexit
import os
import sys

path, np_, nc, code = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])


def reads(n):
    for _ in range(n):
        fd = os.open(path, os.O_RDONLY)
        assert len(os.read(fd, 100)) == 100
        os.close(fd)


atexit.register(lambda: print("atexit", flush=True))   # parent only: child uses os._exit
reads(np_)
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    reads(nc)
    os._exit(code)
_, st = os.waitpid(pid, 0)
print("child=%d status=%d" % (pid, os.waitstatus_to_exitcode(st)))
