"""A loop that reads one file over and over until STOP exists, for the
capture gate's tests (tests/traced/test_capture.py): argv FILE READY STOP. It
opens FILE once, creates READY, then reads it from the start every 2 ms,
and prints how many reads it made."""
import os
import sys
import time

path, ready, stop = sys.argv[1:4]
fd = os.open(path, os.O_RDONLY)
open(ready, "w").close()
n = 0
while not os.path.exists(stop):
    os.pread(fd, 8, 0)
    n += 1
    time.sleep(0.002)
print("reads %d" % (n > 0))
