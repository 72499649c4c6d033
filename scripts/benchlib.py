"""benchlib.py: what the two halves of `make bench` share, defined once.
scripts/bench_measure.py runs the benchmarks and writes their results to a
JSON file; scripts/bench_render.py reads that file and writes
docs/BENCHMARKS.md (scripts/bench.sh runs one, then the other). Shared here:
that file's reading and writing, so the one place that knows its shape
is next to itself, and the facts that both the measuring and the report
name. Nothing here measures: the renderer imports this and nothing else of
the benchmarks.

Standard library only; run with Debian's /usr/bin/python3.
"""
import json
import os

# LTTng-UST is not run on file I/O (section 2) nor on train.py (section 7):
# the reason, as the report gives it
LTTNG_IO_WHY = ("LTTng-UST has no preload wrapper for file I/O: liblttng-ust-libc-wrapper.so wraps "
                "malloc/calloc/realloc/free/memalign/posix_memalign only, liblttng-ust-fd.so wraps "
                "close/fclose only to protect its own fds and emits no events; file I/O events come "
                "from the LTTng kernel tracer (lttng-modules), which is not available here "
                "(`lttng list -k`: \"Kernel tracer not available\", no /lib/modules, no module loading "
                "in this VM/container)")

# section 6, the sync copy from Python: (run, what it is), in the order run
# and shown
PY_CUDA = [("base", "untraced"), ("ft0", "feedtrace, stacks off, no Python frames"),
           ("ft16", "feedtrace, stacks on (16), no Python frames"),
           ("ft16py", "feedtrace, stacks on (16) + Python frames (default)")]


def save_results(path, results):
    """Writes the results (bench_measure.py's main() says what they hold)
    to path as JSON, replacing it whole."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


def load_results(path):
    """The results as save_results was given them: JSON turns tuples into
    lists (nothing reads them as tuples) and dict keys into strings, so
    train.py's figures are keyed by the worker count again, an int."""
    with open(path) as f:
        results = json.load(f)
    train = results["sections"].get("train")
    if train:
        train["w"] = {int(k): v for k, v in train["w"].items()}
    return results
