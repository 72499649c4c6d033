#!/usr/bin/env python3
"""ranksynth.py: synthetic rank summaries, as `feedtrace report --json`
writes them (docs/REPORT-SCHEMA.md, "collectives"), for the tests of
`feedtrace ranks` and its benchmark (make bench, section 8b). Each rank's
summary holds its main process, one communicator and COLLS all-reduces:
the k-th starts at k * INTERVAL on the ranks' common clock, rank r
arriving (r mod 8) * 10 us after that (the straggler LATE later), and
every rank leaving 50 us after the last arrival. A rank on host h records
on a monotonic clock h * 1 s ahead, and its wall-clock offset (realtime
minus monotonic) is off by wall_err(h) ns: the merge must take both out.
Every figure is exact, so the tests can assert the report's numbers.

  ranksynth.py DIR RANKS [COLLS] [--straggler R] [--hosts H] [--stride-of R:S,...]
"""
import json
import os
import sys

INTERVAL = 100_000_000          # ns between collectives
STEP = 10_000                   # rank r arrives (r % 8) * STEP after the collective's start
LATE = 8_000_000                # the straggler's extra lateness (over a 20th of INTERVAL)
LEAVE = 50_000                  # everyone leaves this long after the last arrival
BASE = 1_000_000_000_000        # the first collective, on host 0's monotonic clock


def wall_err(h):
    """host h's wall clock error against host 0's (ns): NTP-sized"""
    return 0 if h == 0 else ((h * 7919) % 4001 - 2000) * 1000


def arrivals(k, ranks, straggler):
    a = [BASE + k * INTERVAL + r % 8 * STEP for r in range(ranks)]
    if straggler is not None:
        a[straggler] += LATE
    return a


def summary(rank, ranks, colls, straggler=None, hosts=1, stride=1, job="synth-1"):
    h = rank * hosts // ranks
    mono = h * 1_000_000_000            # this host's monotonic clock is ahead by this
    starts, durs = [], []
    prev = 0
    for k in range(0, colls, stride):
        a = arrivals(k, ranks, straggler)
        leave = max(a) + LEAVE
        t = a[rank] + mono
        starts.append(t - prev)
        prev = t
        durs.append(leave - a[rank])
    slow = rank == straggler
    limit = "data delivery" if slow else "synchronization"
    verdict = {"pid": 1000 + rank, "limit": limit,
               "sentence": "The GPU feed is limited by %s: synthetic." % limit}
    proc = {
        "pid": 1000 + rank, "ppid": 1, "role": "main", "cmdline": "train.py --rank %d" % rank,
        "rank": {"rank": rank, "local_rank": rank % 8, "world_size": ranks,
                 "launcher": "torchrun", "job": job},
        "collectives": {
            "host": "node%d" % h,
            # wall offset: realtime - monotonic, so host 0's 0 and the others' -mono
            # (their monotonic clock is ahead), plus the wall clock's own error
            "wall_offset_ns": -mono + wall_err(h),
            "count": colls, "sampled_every": stride, "step_median_ns": INTERVAL,
            "comms": [{"comm": 0, "count": colls, "start_delta_ns": starts, "dur_ns": durs}],
        },
        "verdict": verdict,
    }
    return {"schema": "feedtrace-report/1", "dir": "rank-%d" % rank,
            "verdict": dict(verdict, detail="",
                            process="main process %d (train.py --rank %d)" % (1000 + rank, rank)),
            "processes": [proc]}


def write(d, ranks, colls, straggler=None, hosts=1, strides=None, job="synth-1"):
    os.makedirs(d, exist_ok=True)
    for r in range(ranks):
        s = (strides or {}).get(r, 1)
        with open(os.path.join(d, "rank-%05d.json" % r), "w") as f:
            json.dump(summary(r, ranks, colls, straggler, hosts, s, job), f,
                      separators=(",", ":"))


def main(argv):
    args, opts = [], {}
    it = iter(argv)
    for a in it:
        if a.startswith("--"):
            opts[a] = next(it)
        else:
            args.append(a)
    if len(args) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    strides = {}
    for x in filter(None, opts.get("--stride-of", "").split(",")):
        r, s = x.split(":")
        strides[int(r)] = int(s)
    st = opts.get("--straggler")
    write(args[0], int(args[1]), int(args[2]) if len(args) > 2 else 1000,
          int(st) if st is not None else None, int(opts.get("--hosts", "1")), strides)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
