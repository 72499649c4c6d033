"""Two threads open a missing file named by the time (CLOCK_MONOTONIC, ns)
every 2 ms for argv[1] ms: each open's record can be set against the
moment the program took just before it (tests/traced/test_clock.py). With
argv[2] "fork", a child forked then does the same for 300 ms more."""
import os
import sys
import threading
import time

END = time.monotonic_ns() + int(sys.argv[1]) * 1000000


def loop(name):
    while True:
        t = time.monotonic_ns()
        if t > END:
            return
        try:
            os.open("/nonexistent-feedtrace-clock/%s-%d" % (name, t), os.O_RDONLY)
        except FileNotFoundError:
            pass
        time.sleep(0.002)


threads = [threading.Thread(target=loop, args=("t%d" % i,)) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if sys.argv[2:] == ["fork"]:
    pid = os.fork()
    if pid == 0:
        END = time.monotonic_ns() + 300000000
        loop("child")
        os._exit(0)
    os.waitpid(pid, 0)
