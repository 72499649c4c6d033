"""feedtrace's Python-side instrumentation (docs/ARCHITECTURE.md, "PyTorch's
loop"). libfeedtrace.so puts this directory first on PYTHONPATH in a Python
process (libfeedtrace/pyinject.c); CPython's site module imports this file
as `sitecustomize` at start-up. It then

  - takes the directory off PYTHONPATH and sys.path again (the program and
    its children see both as they were), and runs the next `sitecustomize`
    on the path in its place (Debian's, a virtualenv's, the user's own);
  - waits, with one finder in sys.meta_path, for `torch.utils.data` and
    `torch.optim` to be imported, and does nothing else: a program that
    never imports them runs as without it;
  - once they are, records through the library's own range functions
    (feedtrace_range_push/pop, feedtrace_mark): one range per DataLoader
    iterator `__next__` ("feedtrace:next loader=L it=I workers=N
    dataset=CLASS getitem=QUALNAME"), a mark "feedtrace:stop" inside the
    `__next__` that ends an iteration, and a mark "feedtrace:optimizer.step
    CLASS" after each optimizer step (torch >= 2.0: its global step
    post-hook; older torch: a wrapper of each optimizer class's `step`).

It imports nothing at start-up beyond what `site` has loaded already.
"""
import os
import sys

_DIR = os.path.dirname(__file__)


def _unpath():
    """PYTHONPATH as it was: unset ("DIR"), empty ("DIR:DIR") or V ("DIR:V")."""
    v = os.environ.get("PYTHONPATH")
    if v == _DIR:
        del os.environ["PYTHONPATH"]
    elif v == _DIR + os.pathsep + _DIR:
        os.environ["PYTHONPATH"] = ""
        sys.path.remove(_DIR)
    elif v is not None and v.startswith(_DIR + os.pathsep):
        os.environ["PYTHONPATH"] = v[len(_DIR) + 1:]
    if _DIR in sys.path:
        sys.path.remove(_DIR)


def _chain():
    """Runs the next sitecustomize on the path as `sitecustomize`."""
    boot = sys.modules["_frozen_importlib"]
    spec = sys.modules["_frozen_importlib_external"].PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None:
        return
    mod = boot.module_from_spec(spec)
    sys.modules["sitecustomize"] = mod
    spec.loader.exec_module(mod)


# ---- the torch instrumentation, once its modules are imported ----

_WATCH = ("torch.utils.data", "torch.optim")


def _lib():
    import ctypes
    try:
        lib = ctypes.PyDLL(None)      # keeps the GIL: these calls record and return
        fns = (lib.feedtrace_range_push, lib.feedtrace_range_pop, lib.feedtrace_mark)
    except (OSError, AttributeError):
        return None
    fns[0].argtypes, fns[0].restype = [ctypes.c_char_p], ctypes.c_int
    fns[1].argtypes, fns[1].restype = [], ctypes.c_int
    fns[2].argtypes, fns[2].restype = [ctypes.c_char_p], None
    return fns


def _patch_data(fns):
    import functools
    import itertools
    import weakref
    dl = sys.modules["torch.utils.data.dataloader"]
    base = dl._BaseDataLoaderIter
    push, pop, mark = fns
    loaders, iters = weakref.WeakKeyDictionary(), itertools.count(1)
    init, nxt = base.__init__, base.__next__
    subset = getattr(sys.modules.get("torch.utils.data.dataset"), "Subset", ())

    @functools.wraps(init)
    def __init__(self, loader, *a, **k):
        init(self, loader, *a, **k)
        try:
            lid = loaders.setdefault(loader, len(loaders) + 1)
        except TypeError:
            lid = 0
        ds = getattr(loader, "dataset", None)
        while subset and isinstance(ds, subset):
            ds = ds.dataset
        cls = type(ds)
        get = getattr(cls, "__getitem__", None) or getattr(cls, "__iter__", None)
        self._feedtrace_name = ("feedtrace:next loader=%d it=%d workers=%d dataset=%s getitem=%s" % (
            lid, next(iters), getattr(loader, "num_workers", 0) or 0, cls.__name__,
            getattr(get, "__qualname__", "?"))).encode("ascii", "replace")

    @functools.wraps(nxt)
    def __next__(self):
        push(getattr(self, "_feedtrace_name", b"feedtrace:next"))
        try:
            return nxt(self)
        except StopIteration:
            mark(b"feedtrace:stop")
            raise
        finally:
            pop()

    base.__init__, base.__next__ = __init__, __next__


def _patch_optim(fns):
    import functools
    opt = sys.modules["torch.optim.optimizer"]
    mark = fns[2]
    hook = getattr(opt, "register_optimizer_step_post_hook", None)
    if hook is not None:                # torch >= 2.0: one global hook
        hook(lambda o, args, kwargs: mark(b"feedtrace:optimizer.step " +
                                          type(o).__name__.encode("ascii", "replace")))
        return
    cls0 = opt.Optimizer
    init = cls0.__init__
    depth = [0]                         # a subclass's step calling its parent's: one mark

    def wrap(cls):
        step = cls.step
        if getattr(step, "_feedtrace", False):
            return
        name = b"feedtrace:optimizer.step " + cls.__name__.encode("ascii", "replace")

        @functools.wraps(step)
        def wrapper(*a, **k):
            depth[0] += 1
            try:
                r = step(*a, **k)
            finally:
                depth[0] -= 1
            if not depth[0]:
                mark(name)
            return r
        wrapper._feedtrace = True
        cls.step = wrapper

    @functools.wraps(init)
    def __init__(self, *a, **k):
        init(self, *a, **k)
        wrap(type(self))

    cls0.__init__ = __init__


class _Finder:
    """Waits for the watched modules; patches each once it has run."""

    def __init__(self):
        self.left = set(_WATCH)
        self.fns = None

    def find_spec(self, name, path=None, target=None):
        if name not in self.left:
            return None
        for f in sys.meta_path:
            if f is self or not hasattr(f, "find_spec"):
                continue
            spec = f.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module):
            try:
                run(module)
            finally:
                try:
                    del loader.exec_module
                except AttributeError:
                    pass
            self.done(name)
        loader.exec_module = exec_module
        return spec

    def done(self, name):
        self.left.discard(name)
        if not self.left and self in sys.meta_path:
            sys.meta_path.remove(self)
        if self.fns is None:
            self.fns = _lib() or False
        if not self.fns:
            return
        try:
            (_patch_data if name == "torch.utils.data" else _patch_optim)(self.fns)
        except Exception as e:           # a torch whose insides differ: trace without it
            sys.stderr.write("feedtrace: PyTorch instrumentation off (%s: %s)\n" % (
                type(e).__name__, e))


_unpath()
if "torch" not in sys.modules:
    sys.meta_path.insert(0, _Finder())
_chain()
