"""life_pyexc.py FILE K: K open+read(100)+close of FILE, then an uncaught exception."""
import os
import sys

path, k = sys.argv[1], int(sys.argv[2])
for _ in range(k):
    fd = os.open(path, os.O_RDONLY)
    assert len(os.read(fd, 100)) == 100
    os.close(fd)
print("read %d" % k, flush=True)
raise RuntimeError("life_pyexc: deliberate failure after %d reads" % k)
