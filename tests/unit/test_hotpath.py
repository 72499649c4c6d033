"""The hot path kept honest, structurally (issue 20): the hooks of `pread`,
`read`, `open`/`openat`, `close`, `pthread_mutex_lock` and the generated
kernel-launch wrappers, as built, call nothing on their way but the real
function (an indirect call through the pointer resolved at start-up; while
the program has one thread of its own, the system call inline instead:
shim/solo.h) and the helpers listed per hook; the recording itself is inline (recorder.h,
cuda_shim.h). Every other call in their bodies goes to a cold path: a
thread's first record (ft_thread_attach), a hook re-entered from a signal
handler (ft_busy_slow), a full ring (ft_ring_full), a wrapper called
before the constructor (ft_real_init, ft_cu_resolve), the clock without an
invariant TSC or after the TSC was given up (ft_clock_read), errno of a failed call, the first read of a
descriptor made before tracing (ft_fd_kind_probe: one fstat, then
remembered), a CUDA entry's first record (ft_cu_sym_id_slow). A call to a
recording helper (record_read, record_open, ft_record4, ft_reserve...)
failing to be inlined fails here, and so does a tail jump to anything
else. The uncontended lock's path saves at most one register (the wait is
a function apart). Timing is measured in `make bench`, never here."""
import os
import re
import subprocess

import pytest

from conftest import BUILD

LIB = os.path.join(BUILD, "libfeedtrace.so")
COLD = {"ft_thread_attach", "ft_busy_slow", "ft_ring_full", "ft_real_init",
        "ft_clock_read", "__errno_location@plt", "ft_fd_kind_probe"}
_DISASM = {}


def body(name):
    if "out" not in _DISASM:
        _DISASM["out"] = subprocess.run(["objdump", "-d", "--no-show-raw-insn", LIB],
                                        capture_output=True, text=True, check=True).stdout
    out = _DISASM["out"]
    if "__asan_" in out or "__ubsan_" in out:
        pytest.skip("a sanitizer build: its checks are calls")
    m = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)\n\n" % re.escape(name), out, re.S | re.M)
    assert m, name
    return m.group(1).splitlines()


def calls(lines, name=None):
    """(direct call and tail-jump targets, indirect calls, indirect jumps)"""
    text = "\n".join(lines)
    direct = set(re.findall(r"\tcall\s+[0-9a-f]+ <([^>+]+)>", text))
    direct |= {f for f in re.findall(r"\tjmp\s+[0-9a-f]+ <([^>+]+)>", text) if f != name}
    indirect = sum(1 for l in lines if re.search(r"\tcall\s+\*", l))
    ijmp = sum(1 for l in lines if re.search(r"\tjmp\s+\*", l))
    return direct, indirect, ijmp


def syscalls(lines):
    return sum(1 for l in lines if re.search(r"\tsyscall\s*$", l))


@pytest.mark.parametrize("hook", ["pread", "pread64", "read", "close"])
def test_read_close_hooks_record_inline(hook):
    """A read's wrapper, its group off (outside a capture window): the
    call itself (the system call while single-threaded, else the real
    function as a tail call), else a tail jump to NAME_rec, the recording
    path, which is then held to close's shape."""
    if hook != "close":
        direct, indirect, ijmp = calls(body(hook), hook)
        assert direct <= COLD | {hook + "_rec"}, direct
        assert indirect == 0 and ijmp == 1    # the real function, a tail call
        assert syscalls(body(hook)) == 1
        hook += "_rec"
    direct, indirect, ijmp = calls(body(hook), hook)
    assert direct <= COLD, direct - COLD
    assert indirect == 1          # the real function
    assert ijmp <= 1              # the same, as a tail call when not tracing
    # single-threaded: the call itself; a read's twice (the group turned
    # off between the wrapper's look and its own: glibc's multi-threaded
    # path is avoided there too)
    assert syscalls(body(hook)) == (1 if hook == "close" else 2)


@pytest.mark.parametrize("hook", ["open", "open64", "openat", "openat64"])
def test_open_hooks(hook):
    """The path's string id (ft_intern_path: a hash and a table probe; a
    path that does not fit keeps its directory) and, at most once a
    millisecond per thread, the Python opener's site; the record inline.
    Outside a capture window, a DataLoader worker's check of its leader's
    window (ft_capture_follow_now, libfeedtrace/capture.c)."""
    direct, indirect, ijmp = calls(body(hook), hook)
    allowed = COLD | {"ft_intern_path", "open_site", "ft_capture_follow_now"}
    assert direct <= allowed, direct - allowed
    assert indirect == 2          # the real function, traced or not (one call each)
    assert syscalls(body(hook)) == 1   # single-threaded: openat itself


def test_mutex_lock_hook():
    """The uncontended path is the real trylock; a wait is wait_* (the real
    lock and the waiter's call site, native and Python), nothing else."""
    lines = body("pthread_mutex_lock")
    direct, indirect, ijmp = calls(lines, "pthread_mutex_lock")
    assert direct <= COLD | {"wait_pthread_mutex_lock"}, direct
    assert indirect == 1          # trylock
    assert ijmp <= 1              # the real lock when not tracing (tail call)
    # the path to the trylock: at most one register saved (the lock)
    pushes = [l for l in lines if re.search(r"\tpush\s+%", l)]
    assert len(pushes) <= 1, pushes
    direct, indirect, _ = calls(body("wait_pthread_mutex_lock"), "wait_pthread_mutex_lock")
    assert direct <= COLD | {"ft_callsite_native", "ft_callsite_python"}, direct
    assert indirect == 1          # the real lock


@pytest.mark.parametrize("hook", ["cuLaunchKernel", "cuLaunchKernel_ptsz"])
def test_launch_wrapper(hook):
    """The generated launch wrapper: the driver's function, the kernel name
    (a hash probe in cuda.c, asked of the driver once per function handle),
    the record inline (cuda_shim.h ft_cu_launch); the GPU timing events'
    check inline (gpu_time.h ft_gpu_submitted), their sample a cold call
    (ft_gpu_submitted_slow: a stream's first submission, or one sample per
    stream per FEEDTRACE_GPU_MS)."""
    direct, indirect, ijmp = calls(body(hook), hook)
    allowed = COLD | {"ft_cu_kernel_name", "ft_cu_sym_id_slow", "ft_cu_resolve",
                      "ft_gpu_submitted_slow"}
    assert direct <= allowed, direct - allowed
    assert indirect == 1          # the driver's function
    assert ijmp <= 1              # the same, untraced (tail call)


@pytest.mark.parametrize("hook", ["stat", "stat64", "lstat", "lstat64", "fstatat", "fstatat64",
                                  "statx", "__xstat", "__xstat64", "__lxstat", "__lxstat64",
                                  "__fxstatat", "__fxstatat64"])
def test_stat_hooks(hook):
    """The stat family (shape.h's TIMED): the real function, the path's
    string id (ft_intern_path; an empty path's descriptor path is a load)
    and the record inline; nothing else but the cold paths."""
    direct, indirect, ijmp = calls(body(hook), hook)
    allowed = COLD | {"ft_intern_path"}
    assert direct <= allowed, direct - allowed
    assert indirect == 1          # the real function, traced
    assert ijmp <= 1              # the same, untraced (tail call)
