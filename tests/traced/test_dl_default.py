"""A global dlsym look-up of a CUDA symbol finds nothing without a driver,
with feedtrace as without it (feedtrace's exported wrappers must not make
a program believe a driver is there)."""
from conftest import prog, untraced


def test_global_lookup_without_driver(traced):
    plain = untraced([prog("dl_default")])
    r = traced([prog("dl_default")])
    assert plain.stdout == "cuLaunchKernel absent\ncuMemcpyDtoH_v2 absent\nread found\n"
    assert r.stdout == plain.stdout
