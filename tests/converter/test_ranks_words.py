"""`feedtrace ranks` words the straggler's process from the plain fields
of its summary (tests/ranksynth.py's summaries, edited): its pid, rank and
command line, its workers (processes of role "worker" whose parent it is)
and its loader threads (the run verdict's producers), the way the report
words it (converter/out/words.c), not from the report's sentence."""
import json
import os
import subprocess

from conftest import TOOL
import ranksynth


def ranks_text(d):
    r = subprocess.run([TOOL, "ranks", d], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return " ".join(r.stdout.split())


def edit(d, rank, fn):
    path = os.path.join(d, "rank-%05d.json" % rank)
    with open(path) as f:
        s = json.load(f)
    fn(s)
    with open(path, "w") as f:
        json.dump(s, f)


def test_straggler_with_workers_and_a_loader_thread(tmp_path):
    """rank 5 of 8, main process 1005 running Python with two DataLoader
    workers (one of them a worker of another process: not its own) and a
    loader thread among the producers"""
    d = str(tmp_path / "s")
    ranksynth.write(d, 8, 200, straggler=5)

    def workers(s):
        main = s["processes"][0]
        main["cmdline"] = "/usr/bin/python3 train.py --rank 5"
        for pid, ppid in ((1105, 1005), (1106, 1005), (1107, 999)):
            s["processes"].append({"pid": pid, "ppid": ppid, "role": "worker",
                                   "cmdline": "/usr/bin/python3 train.py --rank 5",
                                   "rank": None, "collectives": None})
        s["verdict"]["producers"] = [{"pid": 1105, "tid": 1105, "role": "worker"},
                                     {"pid": 1005, "tid": 1010, "role": "loader thread"}]
        # the report's own sentence is not read for the text
        s["verdict"]["process"] = "something else"
    edit(d, 5, workers)
    assert ("Straggler's verdict: rank 5/8, main process 1005 (python3 train.py --rank 5), "
            "2 DataLoader workers (1105, 1106), 1 loader thread The GPU feed is limited "
            "by data delivery: synthetic.") in ranks_text(d)


def test_straggler_not_python_without_producers(tmp_path):
    """a worker that does not run Python: workers, not DataLoader workers;
    no producers: no loader threads"""
    d = str(tmp_path / "s")
    ranksynth.write(d, 4, 200, straggler=2)

    def workers(s):
        s["processes"].append({"pid": 1100, "ppid": 1002, "role": "worker",
                               "cmdline": "./loader", "rank": None, "collectives": None})
    edit(d, 2, workers)
    assert ("Straggler's verdict: rank 2/4, main process 1002 (train.py --rank 2), "
            "1 worker (1100) The GPU feed") in ranks_text(d)
