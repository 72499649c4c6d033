"""life_pysigint.py FILE K [uncaught]: K reads, "ready", then waits; SIGINT
must still raise KeyboardInterrupt here (prints "caught", exits 0). With
"uncaught" the KeyboardInterrupt is left to Python, which then dies by
SIGINT itself (traceback, returncode -2)."""
import os
import sys
import time

path, k = sys.argv[1], int(sys.argv[2])
for _ in range(k):
    fd = os.open(path, os.O_RDONLY)
    assert len(os.read(fd, 100)) == 100
    os.close(fd)
if sys.argv[3:] == ["uncaught"]:
    print("ready", flush=True)
    time.sleep(60)
    sys.exit(3)
try:
    print("ready", flush=True)
    time.sleep(60)
    print("not interrupted")
    sys.exit(3)
except KeyboardInterrupt:
    print("caught", flush=True)
sys.exit(0)
