"""The data cause of a data-delivery verdict when the producers neither
read files nor wait on locks (docs/ANALYSES.md, "The verdict"): from their
CPU samples and run-queue samples (SCHED chunks), on synthetic traces.
Which of preprocessing, waiting for a core or unknown a traced program gets
depends on how busy the machine was: these traces plant each case, so the
traced tests (tests/traced/test_verdict_shapes.py, test_runq.py) need only
check the cause follows the numbers the program's trace recorded."""
import json
import subprocess

import pytest

from conftest import TOOL
from test_verdict_model import MS, T0, US, launch, new, poll, report, sync


def workers_feed(tmp_path, cpu_ns, runq_ns):
    """Main process 100 as in test_verdict_model's fed_by_poll: per 10 ms
    step, poll() on a pipe 8 ms, read it, launch, sync. Workers 101 and 102
    write a batch to the pipe every 4 ms (0.1 ms each) and are otherwise
    untraced; over T0..T0+100 ms each used cpu_ns of CPU and was runnable,
    waiting for a core, runq_ns. In the window (T0+8.1 ms to the workers'
    last write's end, T0+96.1 ms) each worker's wall is 88 ms: 88% of
    those figures."""
    d = tmp_path / "feed"
    d.mkdir()
    w = new(d, 100)
    for i in range(10):
        t = T0 + i * 10 * MS
        poll(w, 100, t, 8 * MS)
        w.event(100, "PIPE_READ", t + 8 * MS, 10 * US, fd=5, req=1024, ret=1024)
        launch(w, 100, t + 8100 * US)
        sync(w, 100, t + 8200 * US, 1800 * US)
    w.close()
    for pid in (101, 102):
        x = new(d, pid, ppid=100)
        for k in range(25):
            x.event(pid, "PIPE_WRITE", T0 + 4 * MS * k, 100 * US, fd=6, req=1024, ret=1024)
        x.cpu(pid, T0, 0)
        x.cpu(pid, T0 + 100 * MS, cpu_ns)
        x.runq(pid, T0, 0)
        x.runq(pid, T0 + 100 * MS, runq_ns)
        x.close()
    return str(d)


def producers(v):
    return {p["pid"]: (p["role"], p["wall_ns"], p["cpu_ns"], p["runq_ns"], p["io_ns"],
                       p["lock_ns"]) for p in v["producers"]}


@pytest.mark.parametrize("cpu_ms,runq_ms,cause", [
    (10, 60, "waiting for a core"),    # a loaded machine: runnable, not running
    (70, 5, "preprocessing"),          # a quiet one: on the CPU
    (70, 25, "preprocessing"),         # on the CPU, and waiting for a core too
    (10, 5, "unknown"),                # neither: they wait themselves
])
def test_cause_from_cpu_and_run_queue(tmp_path, cpu_ms, runq_ms, cause):
    v = report(workers_feed(tmp_path, cpu_ms * MS, runq_ms * MS))["verdict"]
    assert v["limit"] == "data delivery" and v["pid"] == 100
    assert v["data_cause"] == cause
    cpu, rq = cpu_ms * 880 * US, runq_ms * 880 * US
    assert producers(v) == {101: ("worker", 88 * MS, cpu, rq, 0, 0),
                            102: ("worker", 88 * MS, cpu, rq, 0, 0)}
    detail = " ".join(v["detail"].split())
    also = "They are also runnable, waiting for a core %d%% of their time: more busy " \
           "threads than cores; use fewer threads per core (torch.set_num_threads, " \
           "fewer workers, taskset)." % runq_ms
    if cause == "waiting for a core":
        assert detail == ("The 2 workers are runnable, waiting for a core %d%% of their "
                          "time (on the CPU %d%%, in file I/O 0%%): more busy threads than "
                          "cores; use fewer threads per core (torch.set_num_threads, fewer "
                          "workers, taskset)." % (runq_ms, cpu_ms))
    elif cause == "preprocessing":
        first = ("The 2 workers are on the CPU %d%% of the time: preprocessing; add "
                 "workers or a cheaper transform." % cpu_ms)
        assert detail == (first + " " + also if runq_ms * 5 >= 100 else first)
    else:
        assert detail == ("The 2 producers spend under 20% of their time in file I/O or "
                          "on the CPU: they wait themselves.")


def test_ftgen_writes_the_sched_chunk(tmp_path):
    """the samples are read back as written (dump's per-thread runq)"""
    d = workers_feed(tmp_path, 10 * MS, 60 * MS)
    r = subprocess.run([TOOL, "dump", "--json", d], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    procs = {p["pid"]: p for p in (json.loads(l)["process"] for l in r.stdout.splitlines()
                                   if l.startswith('{"process"'))}
    assert set(procs) == {100, 101, 102}
    assert "runq" not in procs[100] or not procs[100]["runq"]
    for pid in (101, 102):
        assert list(procs[pid]["runq"]) == [str(pid)]
        assert procs[pid]["runq"][str(pid)]["samples"] == 2
