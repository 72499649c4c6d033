"""What libfeedtrace.so exports is exactly what the wrapper tables say.

shim/libc.def: every REAL_FN is a wrapped libc function and must be
exported; REAL_ONLY entries are resolved for the wrappers' own use and
must not be. Anything else exported must start with ft_ or be documented
below (or in shim/cuda.tsv, the table of wrapped CUDA driver symbols).
"""
import os
import re
import subprocess

from conftest import LIB, ROOT

LIBC_DEF = os.path.join(ROOT, "shim", "libc.def")
CUDA_TSV = os.path.join(ROOT, "shim", "cuda.tsv")
GLOO_DEF = os.path.join(ROOT, "shim", "gloo.def")
URING_DEF = os.path.join(ROOT, "shim", "uring.def")

# Exported on purpose but not in a table, with the reason.
DOCUMENTED = {
    "execl": "shim/process.c: builds argv and calls the execv wrapper (glibc's execl* call its internal execve)",
    "execle": "shim/process.c: as execl, through the execve wrapper",
    "execlp": "shim/process.c: as execl, through the execvp wrapper",
    "dlsym": "shim/dl.c: hands back the wrapper for a CUDA driver symbol looked up in libcuda's handle",
    "dlvsym": "shim/dl.c: as dlsym, for versioned look-ups",
    "InitializeInjectionNvtx2": "shim/nvtx.c: the NVTX tool-injection entry point (NVTX_INJECTION64_PATH)",
    "feedtrace_range_push": "shim/nvtx.c: opens a user range on the calling thread (programs without NVTX)",
    "feedtrace_range_pop": "shim/nvtx.c: closes the calling thread's innermost user range",
    "feedtrace_mark": "shim/nvtx.c: records a named instant",
    "GLIBC_2.4": "shim/versions.map: the version lio_listio's older alias answers (a name, no code)",
    "GLIBC_2.34": "shim/versions.map: the version of lio_listio's default (a name, no code)",
}


def def_entries(macro):
    text = open(LIBC_DEF).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return [m.group(1) for m in re.finditer(r"^\s*%s\(\s*(\w+)\s*," % macro, text, re.M)]


def cuda_symbols():
    if not os.path.exists(CUDA_TSV):
        return set()
    out = set()
    for line in open(CUDA_TSV):
        if line.startswith("#") or not line.strip():
            continue
        out.add(line.split("\t")[0])
    return out


def gloo_symbols():
    text = re.sub(r"/\*.*?\*/", "", open(GLOO_DEF).read(), flags=re.S)
    return [m.group(1) for m in re.finditer(r"^GLOO_FN\(\s*\w+\s*,\s*\w+\s*,\s*(\w+)\s*\)", text, re.M)]


def uring_symbols():
    text = re.sub(r"/\*.*?\*/", "", open(URING_DEF).read(), flags=re.S)
    return [m.group(1) for m in re.finditer(r"^URING_FN\(\s*(\w+)\s*\)", text, re.M)]


def test_every_uring_function_is_exported():
    syms = exports()
    names = uring_symbols()
    assert names == ["io_uring_queue_init", "io_uring_queue_init_params",
                     "io_uring_queue_init_mem", "io_uring_setup"]
    assert [n for n in names if syms.get(n) != "T"] == []


def exports():
    r = subprocess.run(["nm", "-D", "--defined-only", LIB], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    syms = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2].split("@")[0]] = parts[1]
    return syms


def test_every_wrapped_libc_symbol_is_exported():
    wrapped = def_entries("REAL_FN")
    assert len(wrapped) > 40
    syms = exports()
    missing = [n for n in wrapped if n not in syms]
    assert missing == []
    not_code = [n for n in wrapped if syms[n] not in ("T", "W", "i")]
    assert not_code == []


def test_every_gloo_collective_is_exported():
    """shim/gloo.def's mangled names are the wrappers' exports, and each
    demangles to the gloo function the table says (c++filt)."""
    names = gloo_symbols()
    assert len(names) == 10
    syms = exports()
    assert [n for n in names if syms.get(n) != "T"] == []
    r = subprocess.run(["c++filt"] + names, capture_output=True, text=True)
    assert r.returncode == 0
    ops = [line.split("(")[0] for line in r.stdout.splitlines()]
    assert ops == ["gloo::allreduce", "gloo::broadcast", "gloo::allgather", "gloo::allgatherv",
                   "gloo::reduce", "gloo::gather", "gloo::scatter", "gloo::alltoall",
                   "gloo::alltoallv", "gloo::barrier"]


def test_resolved_only_symbols_are_not_exported():
    helpers = def_entries("REAL_ONLY")
    assert "sem_trywait" in helpers and "pthread_mutex_trylock" in helpers
    syms = exports()
    assert [n for n in helpers if n in syms] == []


def test_nothing_else_is_exported():
    syms = exports()
    allowed = (set(def_entries("REAL_FN")) | cuda_symbols() | set(gloo_symbols()) |
               set(uring_symbols()) | set(DOCUMENTED))
    extra = sorted(n for n in syms if n not in allowed and not n.startswith("ft_"))
    print("exported, documented outside the tables:")
    for n in sorted(DOCUMENTED):
        print("  %-24s %s" % (n, DOCUMENTED[n]))
    print("exported ft_ symbols: %d" % sum(1 for n in syms if n.startswith("ft_")))
    print("undocumented exports: %s" % (extra or "none"))
    assert extra == []
    # the real_* pointers are internal (hidden), never interposable
    assert [n for n in syms if n.startswith("real_")] == []
    for n in DOCUMENTED:
        assert n in syms, "%s is documented as exported but is not" % n
