"""The hot path kept honest, structurally (issue 20): the hook of `pread`
and of `pthread_mutex_lock`, as built, call nothing on their way but the
real function (an indirect call through the pointer resolved at start-up)
and, for a lock that had to wait, the call-site capture; the recording
itself is inline (recorder.h). Every other call in their bodies goes to a
cold path: a thread's first record (ft_thread_attach), a hook re-entered
from a signal handler (ft_busy_slow), a full ring (ft_ring_full), a
wrapper called before the constructor (ft_real_init), the clock without an
invariant TSC (clock_gettime), errno of a failed call, the first read of
a descriptor made before tracing (ft_fd_kind_probe: one fstat, then
remembered). A call to a
recording helper (record_read, ft_record4, ft_reserve...) failing to be
inlined fails here. Timing is measured in `make bench`, never here."""
import os
import re
import subprocess

import pytest

from conftest import BUILD

LIB = os.path.join(BUILD, "libfeedtrace.so")
COLD = {"ft_thread_attach", "ft_busy_slow", "ft_ring_full", "ft_real_init",
        "clock_gettime@plt", "__errno_location@plt", "ft_fd_kind_probe"}


def body(name):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", LIB], capture_output=True,
                         text=True, check=True).stdout
    if "__asan_" in out or "__ubsan_" in out:
        pytest.skip("a sanitizer build: its checks are calls")
    m = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)\n\n" % re.escape(name), out, re.S | re.M)
    assert m, name
    return m.group(1).splitlines()


def calls(lines):
    direct = set(re.findall(r"\tcall\s+[0-9a-f]+ <([^>+]+)>", "\n".join(lines)))
    indirect = sum(1 for l in lines if re.search(r"\tcall\s+\*", l))
    return direct, indirect


@pytest.mark.parametrize("hook", ["pread", "pread64", "read"])
def test_read_hooks_record_inline(hook):
    direct, indirect = calls(body(hook))
    assert direct <= COLD, direct - COLD
    assert indirect == 1          # the real function


def test_mutex_lock_hook():
    """The uncontended path is the real trylock; a wait adds the real lock
    and the waiter's call site (native and Python), nothing else."""
    direct, indirect = calls(body("pthread_mutex_lock"))
    assert direct <= COLD | {"ft_callsite_native", "ft_callsite_python"}, direct
    assert indirect == 2          # trylock, then lock when it must wait
