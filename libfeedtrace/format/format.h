/*
 * format.h: the on-disk trace format, shared by recorder and reader.
 * Everything here is little-endian and fixed-size; docs/FORMAT.md is the
 * prose version of this header and must be kept in step with it.
 */
#ifndef FT_FORMAT_H
#define FT_FORMAT_H

#include <stdint.h>

#define FT_FORMAT_VERSION 1

/* ---- the record: one or more 32-byte slots ---- */
struct ft_rec {
	uint64_t ts;      /* start of the call, clock units (see clock kind) */
	uint32_t dur;     /* duration, clock units (<<FT_DUR_SHIFT if FT_RF_DUR_COARSE) */
	uint16_t kind;    /* enum ft_kind (events.def's numbers) */
	uint8_t  nslots;  /* slots in this record, >= 1 */
	uint8_t  flags;   /* FT_RF_* */
	union {           /* payload, laid out by the kind's field list */
		uint32_t u32[4];
		uint64_t u64[2];
	} p;
};
#define FT_SLOT_SIZE 32
#define FT_RF_DUR_COARSE 0x01   /* dur is in units of 2^FT_DUR_SHIFT ticks */
#define FT_DUR_SHIFT 10

enum ft_kind {
	FT_EV_NONE = 0,
#define EV(id, num, name, group, cls, nslots, fields) FT_EV_##id = num,
#include "events.def"
#undef EV
	FT_EV_COUNT
};

/* hook groups, selected by FEEDTRACE_HOOKS */
#define FT_G_IO    0x01u
#define FT_G_LOCK  0x02u
#define FT_G_CUDA  0x04u
#define FT_G_PROC  0x08u
#define FT_G_ALL   0x0fu
/* not hook groups a user selects: set in ft_active by the capture gate
 * (libfeedtrace/capture.c) while the library is on, capturing or not */
#define FT_G_FD    0x10u    /* descriptor bookkeeping of opens, closes, dups (with FT_G_IO) */
#define FT_G_KEEP  0x20u    /* threads and names kept: the library is on */

/* ---- the file: header, then chunks ---- */
#define FT_FILE_MAGIC "FEEDTRC\n"       /* 8 bytes */
#define FT_CLOCK_TSC  1                  /* ticks of the x86 TSC */
#define FT_CLOCK_MONO 2                  /* CLOCK_MONOTONIC nanoseconds */

struct ft_file_header {                  /* 256 bytes */
	char     magic[8];
	uint16_t version;                /* FT_FORMAT_VERSION */
	uint16_t header_size;            /* sizeof(struct ft_file_header) */
	uint32_t clock_kind;             /* FT_CLOCK_* */
	int32_t  pid;
	int32_t  ppid;
	uint32_t exec_seq;               /* 0, or n-th exec of this pid in this run */
	uint32_t hooks;                  /* FT_G_* groups enabled */
	uint64_t start_ticks;            /* clock units at start */
	uint64_t start_mono_ns;          /* CLOCK_MONOTONIC at start */
	uint64_t start_real_ns;          /* CLOCK_REALTIME at start (host alignment) */
	uint64_t ticks_per_sec_guess;    /* first calibration; CLOCK chunks refine it */
	uint32_t ring_slots;             /* per-thread ring size in slots */
	uint32_t reserved0;
	char     host[64];               /* NUL-terminated host name */
	uint64_t run_id;                 /* one per run, shared by its processes; 0: unknown */
	/* the launcher's rank identity (rank.c); world_size 0: none */
	int32_t  rank, local_rank;
	int32_t  world_size;
	uint32_t launcher;               /* enum ft_launcher */
	char     job[48];                /* the launcher's job id, NUL-terminated, or "" */
	char     reserved[48];
};

enum ft_launcher {
	FT_LAUNCH_NONE = 0,
	FT_LAUNCH_TORCH = 1,    /* torchrun / torch.distributed.launch: RANK, WORLD_SIZE */
	FT_LAUNCH_MPI = 2,      /* Open MPI's mpirun: OMPI_COMM_WORLD_* */
	FT_LAUNCH_PMI = 3,      /* MPICH / Hydra: PMI_RANK, PMI_SIZE */
	FT_LAUNCH_SLURM = 4,    /* srun: SLURM_PROCID, SLURM_NTASKS */
	FT_LAUNCH_GLOO = 5,     /* never written: the converter's, for a process with
	                           no launcher's identity whose gloo collectives gave
	                           their context's rank and size */
};

#define FT_CHUNK_MAGIC 0x4b435446u      /* "FTCK" */

enum ft_chunk_type {
	FT_CHUNK_EVENTS  = 1,   /* struct ft_events_prefix, then slots */
	FT_CHUNK_STRINGS = 2,   /* sequence of struct ft_string_entry */
	FT_CHUNK_THREAD  = 3,   /* struct ft_thread_info */
	FT_CHUNK_CLOCK   = 4,   /* struct ft_clock_pair */
	FT_CHUNK_PROCESS = 5,   /* struct ft_process_info, then cmdline bytes */
	FT_CHUNK_END     = 6,   /* struct ft_end_info: how the process ended */
	FT_CHUNK_SYMBOLS = 7,   /* string entries: id of a "#S:" stack -> its frames, one per line */
	FT_CHUNK_CPU     = 8,   /* struct ft_cpu_sample[]: CPU time of each traced thread */
	FT_CHUNK_MODULES = 9,   /* struct ft_module_entry[]: the loaded ELF objects, each once */
	FT_CHUNK_FAULTS  = 10,  /* struct ft_fault_sample[]: major page faults of each thread */
	FT_CHUNK_SCHED   = 11,  /* struct ft_sched_sample[]: run-queue delay of each traced thread */
	FT_CHUNK_GPU     = 12,  /* struct ft_gpu_sample[]: when streams reached our timing events */
	FT_CHUNK_WINDOW  = 13,  /* struct ft_window_mark[]: where capture windows start and stop */
	FT_CHUNK_FLIGHT  = 14,  /* struct ft_flight_info: a flight-recorder window follows */
};

enum ft_codec {
	FT_CODEC_RAW  = 0,      /* stored as is */
	FT_CODEC_ZSTD = 1,      /* one zstd frame */
	FT_CODEC_ZSTD_SHUFFLE = 2, /* events only: slots delta+byte-transposed, then zstd */
};

struct ft_chunk_header {                 /* 24 bytes */
	uint32_t magic;                  /* FT_CHUNK_MAGIC */
	uint16_t type;                   /* enum ft_chunk_type */
	uint16_t codec;                  /* enum ft_codec */
	uint32_t stored_size;            /* bytes that follow this header */
	uint32_t raw_size;               /* bytes after decoding */
	uint32_t payload_hash;           /* ft_hash32 of the stored bytes */
	uint32_t header_hash;            /* ft_hash32 of the 20 bytes above */
};
#define FT_CHUNK_MAX_RAW (64u << 20)     /* readers reject larger chunks */

struct ft_events_prefix {                /* 32 bytes, start of an EVENTS payload */
	int32_t  tid;
	uint32_t nslots;                 /* slots that follow */
	uint64_t first_slot;             /* index of the first slot in the thread's stream */
	uint64_t lost_total;             /* records this thread dropped so far */
	uint64_t stream;                 /* which ring's stream (nonzero), 0 unknown */
};

/* What a descriptor is (wait records' kind fields, events.def). */
enum ft_fd_kind {
	FT_FDK_UNKNOWN = 0, FT_FDK_FILE = 1, FT_FDK_PIPE = 2, FT_FDK_SOCKET = 3,
	FT_FDK_EVENTFD = 4, FT_FDK_EPOLL = 5, FT_FDK_OTHER = 6,
};

/* One thread's CPU time (CLOCK_THREAD_CPUTIME of the thread) at a clock
 * tick: sampled for every traced thread at each flush and at its exit. */
struct ft_cpu_sample {                   /* 24 bytes */
	int32_t  tid;
	uint32_t reserved;
	uint64_t ticks;                  /* when (the trace clock, as ts) */
	uint64_t cpu_ns;                 /* CPU time the thread had used by then */
};

/* Major page faults at a clock tick: of the whole process (tid 0: its
 * threads, exited ones included; what faults.c writes at every drain once
 * the process mapped a file) or of one thread (tid; a reader takes both),
 * with its block I/O wait when the kernel's delay accounting gave it. */
struct ft_fault_sample {                 /* 32 bytes */
	int32_t  tid;
	uint32_t flags;                  /* FT_FAULTS_BASE, FT_FAULTS_DELAYACCT */
	uint64_t ticks;                  /* when (the trace clock, as ts) */
	uint64_t majflt;                 /* major faults taken by then */
	uint64_t blkio_ns;               /* block I/O wait by then (FT_FAULTS_DELAYACCT) */
};
#define FT_FAULTS_BASE      1u           /* the count at the first mapping: a baseline */
#define FT_FAULTS_DELAYACCT 2u           /* blkio_ns is meaningful (faults.c: a thread's, read by the flusher) */

struct ft_sched_sample {                 /* 24 bytes */
	int32_t  tid;
	uint32_t reserved;
	uint64_t ticks;                  /* when (the trace clock, as ts) */
	uint64_t wait_ns;                /* time it had spent runnable, waiting for a
	                                    core, by then (schedstat's second field) */
};

/* The GPU's own time (shim/gpu_time.c): a timing event of ours, recorded
 * on a stream right after a submission, completed at GPU time gpu_ns after
 * the reference event of its context, which was recorded on an idle stream
 * of ours at host tick ref_ticks. kind FT_GPU_LOSSES carries instead the
 * process's running totals of samples not taken (struct ft_gpu_losses). */
enum { FT_GPU_SAMPLE = 1, FT_GPU_LOSSES = 2 };
enum { FT_GPU_WHY_IDLE = 1,      /* first submission after the stream was seen idle */
       FT_GPU_WHY_INTERVAL = 2,  /* first past FEEDTRACE_GPU_MS since the last */
       FT_GPU_WHY_SYNC = 3,      /* just before a stream sync, work unsampled */
       FT_GPU_WHY_WAIT = 4 };    /* before the thread blocks in a wait, work unsampled */
struct ft_gpu_sample {                   /* 56 bytes */
	uint16_t kind;                   /* FT_GPU_SAMPLE */
	uint16_t why;                    /* FT_GPU_WHY_* */
	int32_t  tid;                    /* thread that submitted */
	uint64_t stream;                 /* as the CUDA records name it */
	uint64_t ctx;
	uint64_t submit_ticks;           /* when the sampled submission was called (host) */
	uint64_t ref_ticks;              /* when the reference event was recorded (host) */
	int64_t  gpu_ns;                 /* the event's GPU time minus the reference's */
	uint64_t submits;                /* the stream's submissions so far, this one's
	                                    included (a sync's sample: those before it) */
};
struct ft_gpu_losses {                   /* 56 bytes: totals so far */
	uint16_t kind;                   /* FT_GPU_LOSSES */
	uint16_t reserved;
	uint32_t reserved2;
	uint64_t exhausted;              /* the context's pool had no free event */
	uint64_t capture;                /* a stream capture was under way */
	uint64_t pending;                /* the context's pool was not made yet */
	uint64_t ctx_gone;               /* recorded, its context destroyed first */
	uint64_t errors;                 /* the driver refused a record or a query */
	uint64_t reserved3;
};

/* A loaded ELF object (program, shared library) that return addresses may
 * fall in: the converter symbolises them offline against the file. */
struct ft_module_entry {                 /* 32 bytes, then build_id, then path; padded to 8 */
	uint64_t bias;                   /* load bias: run-time address - file's p_vaddr */
	uint64_t lo, hi;                 /* [lo, hi): its PT_LOAD segments in memory */
	uint32_t path_len;               /* bytes of path, its NUL included */
	uint8_t  build_id_len;           /* bytes of NT_GNU_BUILD_ID (0: none) */
	uint8_t  reserved[3];
};

struct ft_string_entry {                 /* 8 bytes, then len bytes, padded to 8 */
	uint32_t id;
	uint32_t len;
};

struct ft_thread_info {                  /* 80 bytes; writers before py_name: 32 */
	int32_t  tid;
	uint32_t flags;                  /* 1: main thread */
	char     name[24];
	char     py_name[48];            /* Python's name for it (threading), or "" */
};
#define FT_THREAD_INFO_MIN 32            /* readers take chunks this long and up */

struct ft_clock_pair {                   /* 32 bytes */
	uint64_t ticks;
	uint64_t mono_ns;
	uint64_t real_ns;
	uint64_t parted_ns;              /* 0; >0: the fall-back from the TSC starts here */
};

struct ft_process_info {                 /* 16 bytes, then argc NUL-terminated args */
	uint32_t argc;
	uint32_t cmdline_len;
	uint32_t exe_id;                 /* string id of /proc/self/exe, 0 unknown */
	uint32_t reserved;
};

enum ft_end_reason {
	FT_END_EXIT = 1,        /* exit() or return from main */
	FT_END__EXIT = 2,       /* _exit() / _Exit(): no destructors */
	FT_END_SIGNAL = 3,      /* fatal signal caught by the tracer */
	FT_END_EXEC = 4,        /* the image was replaced by exec */
};

struct ft_end_info {                     /* 80 bytes */
	uint32_t reason;                 /* enum ft_end_reason */
	int32_t  status;                 /* exit status or signal number */
	uint64_t records;                /* records written to this file */
	uint64_t lost;                   /* records dropped (full rings, busy, unwritable output) */
	uint64_t threads;                /* threads that recorded */
	uint64_t threads_untraced;       /* threads refused a ring (limits) */
	uint64_t strings_lost;           /* strings that did not fit the table */
	/* appended (an older writer's END is 48 bytes: these read as 0) */
	uint64_t handler_lost;           /* calls in signal handlers not recorded */
	uint64_t shared_lost;            /* calls by clone(CLONE_VM) children on our TLS, not recorded */
	uint64_t reserved[2];
};
#define FT_END_INFO_V1_SIZE 48

/* A capture window's start or stop (FEEDTRACE_CAPTURE, feedtrace capture):
 * records exist only between a window's start and its stop (or the END). */
enum ft_window_what { FT_WIN_START = 1, FT_WIN_STOP = 2 };
enum ft_window_unit {
	FT_WIN_UNIT_NONE = 0,   /* not at a step boundary (time, a follower) */
	FT_WIN_UNIT_RANGE = 1,  /* user step ranges ("step..." push/pop) */
	FT_WIN_UNIT_OPT = 2,    /* optimizer steps (Python-side instrumentation) */
	FT_WIN_UNIT_BATCH = 3,  /* DataLoader batches (__next__) */
};
enum ft_window_reason {
	FT_WIN_STEPS = 1,       /* FEEDTRACE_CAPTURE=steps:... */
	FT_WIN_TIME = 2,        /* FEEDTRACE_CAPTURE=time:... */
	FT_WIN_DEMAND = 3,      /* feedtrace capture (the run directory's request) */
	FT_WIN_FOLLOW = 4,      /* the parent's window (a forked worker) */
};
struct ft_window_mark {                  /* 32 bytes */
	uint32_t seq;                    /* the window's number in this file, from 1 */
	uint16_t what;                   /* enum ft_window_what */
	uint16_t unit;                   /* enum ft_window_unit */
	uint32_t reason;                 /* enum ft_window_reason */
	uint32_t demand;                 /* the request's id (FT_WIN_DEMAND), else 0 */
	uint64_t step;                   /* start: first step; stop: last step (0: none) */
	uint64_t ticks;                  /* when */
};

/* the run directory's file that asks its traced processes for their
 * flight windows (`feedtrace flight`, libfeedtrace/flight.c) */
#define FT_FLIGHT_REQUEST_FILE "flight.request"

/* Why a flight recorder wrote its window (FEEDTRACE_FLIGHT) */
enum ft_flight_why {
	FT_FLIGHT_REQUEST = 1,  /* the run directory's request file (`feedtrace flight`) */
	FT_FLIGHT_SIGNAL = 2,   /* a fatal signal; detail: its number */
	FT_FLIGHT_HANG = 3,     /* no step for hang_s; detail: the pid that hung */
	FT_FLIGHT_EXIT = 4,     /* exit, _exit (FEEDTRACE_FLIGHT_EXIT); detail: the status */
	FT_FLIGHT_EXEC = 5,     /* exec (FEEDTRACE_FLIGHT_EXIT) */
};

struct ft_flight_info {                  /* 80 bytes */
	uint32_t why;                    /* enum ft_flight_why */
	int32_t  detail;
	uint32_t seq;                    /* 1 for the file's first window, 2, ... */
	uint32_t keep_s;                 /* seconds kept, 0: by bytes only */
	uint64_t keep_bytes;             /* the window's bound in memory */
	uint64_t window_ticks;           /* the window starts here; 0: at the file's start */
	uint64_t dump_ticks;             /* when it was written */
	uint64_t dropped_chunks;         /* left out of windows so far (older than the window) */
	uint64_t dropped_slots;          /* ... their EVENTS slots */
	uint64_t dropped_bytes;          /* ... their bytes */
	uint64_t def_lost;               /* defining chunks not kept (their store full) */
	uint32_t hang_s;                 /* FEEDTRACE_FLIGHT_HANG_S */
	uint32_t reserved;
};

/* FNV-1a, 32 bit: chunk integrity (not security) */
static inline uint32_t ft_hash32(const void *data, uint64_t len)
{
	const unsigned char *p = data;
	uint32_t h = 2166136261u;
	for (uint64_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

#endif
