"""life_subproc.py HOW PROG FILE M: starts `PROG ret FILE M 0` with
subprocess.run (vfork) / subprocess.run(close_fds=False) (posix_spawn) /
os.posix_spawn, and checks that it ran. "run_failed_exec" first runs a
program that does not exist (the vfork child's exec fails and it leaves
with _exit(255) on the parent's memory), then PROG."""
import os
import subprocess
import sys

how, prog, path, m = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
argv = [prog, "ret", path, m, "0"]
if how == "run_failed_exec":
    try:
        subprocess.run([path + ".missing"])
        raise SystemExit("the missing program ran")
    except FileNotFoundError:
        pass
    how = "run"
if how == "run":
    rc = subprocess.run(argv).returncode
elif how == "run_noclose":
    rc = subprocess.run(argv, close_fds=False).returncode
elif how == "posix_spawn":
    pid = os.posix_spawn(prog, argv, os.environ)
    rc = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
else:
    raise SystemExit("bad mode " + how)
print("child rc=%d" % rc, flush=True)
sys.exit(rc)
