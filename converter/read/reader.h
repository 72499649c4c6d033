/*
 * reader.h: reads a trace directory. Opening scans every file once for its
 * header, strings, threads, clock pairs and end record (no event decoding);
 * events are then streamed per process, chunk by chunk, in file order
 * (within a thread that is time order). Damage is reported with file and
 * offset, and everything intact around it is still read.
 */
#ifndef FT_READER_H
#define FT_READER_H

#include <stdint.h>
#include <stdio.h>

#include "format.h"

struct ft_strtab;

struct ft_cpu_point {
	uint64_t ticks;          /* trace clock */
	uint64_t cpu_ns;         /* the thread's CPU time by then */
};

struct ft_fault_point {
	uint64_t ticks;          /* trace clock */
	uint64_t majflt;         /* major faults by then */
	uint64_t blkio_ns;       /* block I/O wait by then (delay accounting) */
};

/* one thread's (tid 0: the process's) FAULTS samples, in time order */
struct ft_fault_series {
	int32_t tid;
	int base;                /* its first sample is the baseline: faults before
	                            it are not counted */
	int timed;               /* a sample of it has blkio_ns (DELAYACCT); its
	                            others carry the wait last known */
	struct ft_fault_point *pt;
	int n, cap;
};

struct ft_thread_rec {
	int32_t tid;
	char name[24];           /* the kernel's (comm), as the program left it */
	char py_name[48];        /* Python's threading name, or "" */
	uint64_t lost;           /* highest lost_total seen */
	uint64_t records;
	uint64_t stream;         /* stream of the last EVENTS chunk read */
	uint64_t next_slot;      /* end of the slots read of that stream */
	struct ft_cpu_point *cpu;    /* CPU samples (CPU chunks), in time order */
	int ncpu, cpucap;
	struct ft_cpu_point *runq;   /* run-queue delay samples (SCHED chunks): cpu_ns
	                                holds the delay so far */
	int nrunq, runqcap;
};

struct ft_module {            /* a MODULES entry: a loaded ELF object */
	uint64_t bias, lo, hi;
	unsigned char build_id[255];
	int build_id_len;
	char *path;
};

/* A capture window (WINDOW chunks): its marks paired by seq. end_ticks 0:
 * open to the file's end. */
struct ft_window {
	uint32_t seq, reason, unit, demand;     /* enum ft_window_reason, _unit (format.h) */
	uint64_t first_step, last_step;         /* 0: none */
	uint64_t start_ticks, end_ticks;
};

struct ft_process {
	char *path;              /* the file */
	struct ft_file_header hdr;
	char *cmdline;           /* args joined by spaces */
	char exe[256];
	/* clock: ns = base_ns + (ticks - base_ticks) * ns_per_tick */
	uint64_t base_ticks, base_ns;
	double ns_per_tick;
	uint64_t calib_span_ns;      /* time between the calibration pairs used */
	uint64_t last_ns;        /* latest clock pair or end */
	/* the writer's fall-back from the TSC (a CLOCK pair with parted_ns):
	 * ticks after fb_ticks are ns = fb_ns + (ticks - fb_ticks) * fb_ns_per_tick */
	uint64_t clock_parted_ns;    /* 0: none */
	uint64_t fb_ticks, fb_ns;
	double fb_ns_per_tick;
	/* strings: id -> text (id = offset/8+1 in the writer's arena) */
	struct ft_strtab *strings;
	struct ft_strtab *symbols;   /* "#S:" stack id -> symbolised frames */
	struct ft_module *mods;      /* MODULES chunks, in file order */
	int nmods, capmods;
	void *sym;                   /* the symboliser's cache (symbolize.c), */
	void (*sym_free)(void *);    /* freed with the process by this */
	struct ft_thread_rec *threads;
	int nthreads;
	struct ft_fault_series *faults;  /* FAULTS chunks: per thread, and tid 0 */
	int nfaults;
	uint32_t fault_flags;    /* FT_FAULTS_* of any sample (DELAYACCT: times known) */
	struct ft_end_info end;
	int has_end;
	int end_count;           /* more than one: exec continued the file */
	uint64_t chunks, bad_chunks, bad_bytes;
	uint64_t dup_slots;      /* slots read twice (an exit drain beside the flusher): skipped */
	uint64_t records;        /* records found in EVENTS chunks */
	uint64_t children_untraced;  /* its fork records' children with no file here
	                                (counted by a pass over its events: report, dump) */
	int fd;                  /* open while a pass reads it (pread), else -1 */
	uint64_t dev, ino;       /* the file opened: a pass reads no other */
	uint64_t size;           /* size at open, cut if the file shrank since */
	int shrunk;              /* that was reported */
	unsigned char *buf, *scan;   /* during a pass: a chunk's stored bytes; resync window */
	size_t buf_cap, scan_cap;
	/* the GPU's timing samples (GPU chunks), in file order, and the
	 * latest totals of samples not taken */
	struct ft_gpu_sample *gpu;
	int ngpu, capgpu;
	struct ft_gpu_losses gpu_lost;
	struct ft_window *win;   /* capture windows, in file order; none: recorded throughout */
	int nwin, capwin;
	/* a flight recorder's windows (FLIGHT chunks): the first's and the
	 * last's; the process's start (base_ns) is then the first window's,
	 * run_start_ns the header's */
	struct ft_flight_info flight, flight_last;
	int nflight;
	uint64_t run_start_ns;
};

struct ft_trace {
	struct ft_process **procs;
	int nprocs;
	uint64_t errors;         /* damaged places reported */
	uint64_t start_ns;       /* earliest process start (MONOTONIC) */
	int32_t *pids;           /* the pids of every file read at open, sorted */
	int npids;
};

struct ft_event {
	const struct ft_process *proc;
	int32_t tid;
	uint64_t ts_ns;          /* CLOCK_MONOTONIC nanoseconds */
	uint64_t dur_ns;
	const struct ft_rec *rec;
};

typedef int (*ft_event_fn)(const struct ft_event *ev, void *arg);

/* Opens every *.ft file in dir. err receives one line per problem.
 * Returns 0 if at least one process was readable, -1 otherwise. */
int ft_trace_open(const char *dir, struct ft_trace *tr, FILE *err);
void ft_trace_close(struct ft_trace *tr);
/* a file read at open is of pid (also after ft_trace_keep) */
int ft_trace_has_pid(const struct ft_trace *tr, int32_t pid);
/* keeps the processes i with keep[i] (in order), closes the others */
void ft_trace_keep(struct ft_trace *tr, const unsigned char *keep);
/* 0 when the files come from one run (the same run id in every header
 * that has one); else one line on err naming two files of different
 * runs, after "feedtrace CMD: ", and -1 */
int ft_trace_one_run(const struct ft_trace *tr, const char *cmd, FILE *err);

/* A process made in memory, not read from a file (tests/unit/an_*.c: the
 * analyses on event arrays): pid, command line, start; no threads, clock
 * ticks are nanoseconds. ft_process_mem_string gives a string's id (one
 * per distinct text). ft_process_mem_free frees it. */
struct ft_process *ft_process_mem(int32_t pid, const char *cmdline, uint64_t start_ns);
uint32_t ft_process_mem_string(struct ft_process *p, const char *s);
void ft_process_mem_free(struct ft_process *p);

/* Calls fn for each event of p in file order; stops early if fn != 0. */
int ft_process_events(struct ft_process *p, ft_event_fn fn, void *arg, FILE *err);

const char *ft_string(const struct ft_process *p, uint32_t id);
/* A call-site id's frames as the recorder symbolised them (SYMBOLS chunk,
 * one per line), else the string itself. converter/symbolize.h reads
 * them offline (ft_site_text). */
const char *ft_site_symbols(const struct ft_process *p, uint32_t id);
uint64_t ft_ticks_to_ns(const struct ft_process *p, uint64_t ticks);
/* a capture window's reason and unit as words ("steps", "optimizer steps") */
const char *ft_window_reason_name(uint32_t reason);
const char *ft_window_unit_name(uint32_t unit);
/* p's recorded span: its first window's start (its start when it has no
 * window) to its last window's end (its end: last_ns); 0 when no window */
int ft_process_windowed(const struct ft_process *p, uint64_t *from_ns, uint64_t *to_ns);
uint64_t ft_dur_to_ns(const struct ft_process *p, const struct ft_rec *r);
/* a thread's name: Python's (threading) where it has one, else the
 * kernel's; "" for a thread never named */
const char *ft_thread_name(const struct ft_process *p, int32_t tid);
/* CPU time thread tid used in [t0_ns, t1_ns] (CLOCK_MONOTONIC), linear
 * between its samples, none before the first or after the last; -1 when
 * the interval and its samples do not overlap. */
/* Major page faults of thread tid (0: the whole process) in [t0_ns, t1_ns]
 * from its FAULTS samples (each sample's count holds from its time on;
 * none before a baseline, or before the first sample of a thread that
 * started after it), and its block I/O wait (delay accounting) likewise;
 * 0 when it has no samples. */
int ft_thread_faults(const struct ft_process *p, int32_t tid, uint64_t t0_ns,
		     uint64_t t1_ns, uint64_t *majflt, uint64_t *blkio_ns);
/* The block I/O wait of thread tid in [t0_ns, t1_ns] from its timed
 * series; tid 0: the process's series where it is timed, else the sum of
 * its threads' timed series (a recorder that reads the process's count
 * by getrusage has no wait for it). Returns 0 (and *ns 0) when no series
 * says: the kernel's delay accounting was off, or the trace has counts
 * only. */
int ft_fault_wait(const struct ft_process *p, int32_t tid, uint64_t t0_ns, uint64_t t1_ns,
		  uint64_t *ns);
int64_t ft_thread_cpu_ns(const struct ft_process *p, int32_t tid,
			 uint64_t t0_ns, uint64_t t1_ns);
/* the time thread tid spent runnable, waiting for a core, in [t0_ns,
 * t1_ns], the same way from its SCHED samples; -1 likewise */
int64_t ft_thread_runq_ns(const struct ft_process *p, int32_t tid,
			  uint64_t t0_ns, uint64_t t1_ns);
/* threads that recorded or were named (a thread known only from CPU
 * samples, one that never made a traced call, is not counted) */
int ft_thread_traced(const struct ft_thread_rec *t);
int ft_traced_threads(const struct ft_process *p);
/* its wall clock minus its monotonic clock at its start: the offset that
 * puts its times on the wall clock (ranks on several hosts) */
static inline int64_t ft_wall_offset(const struct ft_process *p)
{
	return (int64_t)(p->hdr.start_real_ns - p->hdr.start_mono_ns);
}
/* string entries read from the file's STRINGS chunks */
uint32_t ft_string_count(const struct ft_process *p);

/* What the recorder counted but could not record: one definition for
 * dump, report and their JSON (key), with what it means and what to
 * change. */
enum ft_loss {
	FT_LOSS_RECORDS,         /* records dropped (full ring, unwritable output) */
	FT_LOSS_THREADS,         /* threads refused a ring (memory bound) */
	FT_LOSS_STRINGS,         /* strings (paths) recorded without their text */
	FT_LOSS_HANDLER,         /* calls in signal handlers not recorded */
	FT_LOSS_ENDS,            /* processes whose file has no END record */
	FT_LOSS_SHARED,          /* calls by clone(CLONE_VM) children on their parent's TLS */
	FT_LOSS_CHILDREN,        /* forked children that left no file */
	FT_LOSS_CLOCK,           /* processes that gave the TSC up (a CLOCK pair's parted_ns) */
	FT_LOSS_N
};
struct ft_loss_info {
	const char *key;         /* JSON key (the END field's name) */
	const char *what;        /* "N <what>" */
	const char *fix;         /* what to change */
};
extern const struct ft_loss_info ft_loss_info[FT_LOSS_N];
uint64_t ft_process_loss(const struct ft_process *p, enum ft_loss k);
/* ft_flight_why: "request", "signal", ... (words.c's ft_words_flight
 * words a flight recorder's window) */
const char *ft_flight_why(uint32_t why);
uint64_t ft_flight_window_ns(const struct ft_process *p);  /* window start to last dump */
uint64_t ft_flight_run_ns(const struct ft_process *p);     /* run start to last dump */

#endif
