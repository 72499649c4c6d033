"""fork_children.py N [drop]: forks N children, each reading /etc/hostname
5 times, and waits for them; with drop, first becomes nobody (uid and gid
65534), so that its children cannot make their trace files in a directory
only root may write (tests/traced/test_lost_children.py). Prints "ok"."""
import os
import sys

n = int(sys.argv[1])
if sys.argv[2:] == ["drop"]:
    os.setgid(65534)
    os.setuid(65534)
kids = []
for i in range(n):
    pid = os.fork()
    if pid == 0:
        for _ in range(5):
            with open("/etc/hostname", "rb") as f:
                f.read()
        os._exit(0)
    kids.append(pid)
for pid in kids:
    _, st = os.waitpid(pid, 0)
    assert st == 0
print("ok")
