/*
 * internal.h: declarations shared by the recorder's own files (ring,
 * strings, output, flusher, lifecycle), each under the file that defines
 * it. Hooks include recorder.h only.
 */
#ifndef FT_INTERNAL_H
#define FT_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "format.h"
#include "recorder.h"

#define FT_MAX_THREADS 4096
#define FT_MAX_CHUNK_SLOTS 16384            /* 512 KiB of records per chunk */

enum ft_slot_state { FT_SLOT_FREE, FT_SLOT_CLAIMED, FT_SLOT_LIVE, FT_SLOT_EXITED };

/* ring.c */
extern struct ft_thread ft_threads[FT_MAX_THREADS];
extern _Atomic unsigned ft_threads_hw;
extern _Atomic uint64_t ft_threads_untraced;
extern _Atomic uint64_t ft_threads_seen;
extern _Atomic uint64_t ft_lost_recycled;
extern _Atomic uint32_t ft_wake_seq;
extern __thread int ft_tls_notrace;
extern struct ft_thread ft_thread_refused;
extern struct ft_thread ft_thread_vfork_child;
void ft_thread_leaving(void);                  /* a thread's start routine ended */
int ft_thread_gone(const struct ft_thread *t);  /* flusher: its tid is gone */
void ft_flusher_wake(void);
void ft_ring_recycle(struct ft_thread *t);
void ft_ring_after_fork_child(void);
void ft_ring_populate(struct ft_thread *t);    /* flusher: pages ahead of its head */
void *ft_map_anon(size_t bytes, int flags);
void ft_populate(void *addr, size_t bytes);   /* pages faulted in now, if it can */
void ft_thread_set_name(struct ft_thread *t, const char *name);
void ft_thread_set_py_name(const char *name);   /* the calling thread's */
struct ft_thread *ft_thread_by_pthread(uint64_t th);
/* clone(CLONE_VM) children that share the caller's TLS (ring.c) */
_Atomic int32_t *ft_shared_begin(int watched);  /* before the clone: the word to clear */
void ft_shared_end(_Atomic int32_t *live, int cloned);  /* after it, in the parent */
struct ft_thread *ft_own_ring(void);           /* the caller's ring, or NULL */
uint64_t ft_streams_given(void);               /* rings given out so far (stream ids) */
int ft_self_foreign(void);                     /* a task on another's memory and TLS */
extern _Atomic uint64_t ft_shared_lost;
/* strtab.c */
void ft_strtab_init(void);
uint64_t ft_strtab_after_fork_child(void);   /* the inherited strings' end */
void ft_strtab_prefault(void);               /* flusher: the table's first pages */
/* Next run of published entries after *pos, as file bytes; 0 if none. */
size_t ft_strtab_pending(uint64_t *pos, const void **data);
const struct ft_string_entry *ft_strtab_entry(uint32_t id);
/* strrefs.c: a fork child writes the inherited strings its records name */
void ft_strrefs_after_fork_child(uint64_t inherited_end);
uint64_t ft_strrefs_start(void);
size_t ft_strrefs_collect(const struct ft_rec *ring, uint64_t mask, uint64_t first,
			  uint64_t n, unsigned char *buf, size_t cap);
size_t ft_strrefs_one(uint32_t id, unsigned char *buf, size_t cap);
extern _Atomic uint64_t ft_strings_lost;

extern uint64_t ft_redact_key;
void ft_redact_text(const void *data, size_t n, char out[26]);

/* faults.c: the process's and each thread's major page faults, once a
 * file is mapped; the drains hold the flush lock */
struct ft_fault_batch {
	struct ft_fault_sample s[64];
	unsigned n;
	int acct;                        /* delay accounting on (-1: not read yet) */
};
/* a drain's batch, begun with the process's count; 0: no file mapped */
int ft_faults_begin(struct ft_fault_batch *b);
/* thread t's count (slot state st): read now by the flusher's cycle
 * (flusher) or by t itself (a drain on t), or the one it noted as it left
 * (an exited one, any drain) */
void ft_faults_thread(struct ft_fault_batch *b, struct ft_thread *t, int st, int flusher);
void ft_faults_write(struct ft_fault_batch *b);
void ft_faults_leaving(void);                 /* a thread's start routine ended */
uint64_t ft_faults_own(void);                 /* the caller's count (0: none mapped) */
/* a thread without a ring, tid, started at start ticks (flusher.c's
 * places): read now (flusher), or its end's count (end ticks, not 0);
 * *seen: its first sample was taken */
void ft_faults_made(struct ft_fault_batch *b, int32_t tid, uint64_t start, int *seen,
		    uint64_t end, uint64_t end_majflt, int flusher);
void ft_faults_after_fork_child(void);
void ft_faults_watch(void);                   /* the process mapped a regular file */

/* output.c */
int ft_output_open(void);
extern uint64_t ft_run_id;                    /* in every file's header */
void ft_output_vacate(int fd);                /* the program takes fd over */
void ft_output_own_table(void);               /* the flusher thread, as it starts */
int ft_output_own_table_held(void);           /* the caller is that thread, in its table */
int ft_output_write_chunk(unsigned type, unsigned codec, uint32_t raw_size,
			  const struct iovec *iov, int iovcnt);
int ft_output_write_last(unsigned type, unsigned codec, uint32_t raw_size,
			 const struct iovec *iov, int iovcnt);
extern int ft_out_fd;
void ft_output_flight_dump(int why, int detail);  /* flight.c's window, holding the flush lock */
extern _Atomic uint64_t ft_records_written;
extern _Atomic uint64_t ft_records_unwritten;
int ft_flush_lock(long timeout_ms);           /* 0 when taken; -1 on timeout (taken anyway: no) */
void ft_flush_unlock(void);
void ft_flush_lock_reset(void);               /* fork child */

/* rank.c: the launcher's rank identity, read at start-up */
struct ft_rank {
	int32_t rank, local_rank, world_size;   /* world_size 0: none; local_rank -1: unknown */
	uint32_t launcher;                      /* enum ft_launcher */
	char job[48];
};
extern struct ft_rank ft_rank;
void ft_rank_load(void);

/* modules.c: the MODULES chunk (loaded objects, each once per file),
 * each chunk through write (the flusher's: one zstd frame when smaller;
 * NULL: raw, as the fork's prepare handler writes it while the flusher
 * may be compressing) */
typedef void ft_chunk_writer(unsigned type, const void *data, size_t n);
void ft_modules_write(ft_chunk_writer *write);
void ft_modules_after_fork_child(void);
void ft_modules_write_cached(void);   /* AS-safe: a fork child's inherited list, once */

/* flusher.c */
int ft_flusher_start(void);
extern int ft_alloc_fork_unsafe;    /* a sanitizer's allocator: fork waits for a quiet flusher */
void ft_flusher_stop(void);         /* final compressed drain, then join */
void ft_flush_all_raw(void);        /* async-signal-safe drain, caller holds the lock */
int ft_flusher_compressing(void);   /* zstd running, the lock let go */
int ft_flusher_quiet(void);         /* started and not compressing (or none) */
void ft_flusher_forget(void);       /* fork child: the thread is gone */
void ft_write_end(int reason, int status);
int ft_cpu_track(int32_t tid);           /* a thread the program made: sample its CPU too */
void ft_cpu_track_end(int place);        /* its start routine returned */
void ft_cpu_tids_after_fork_child(void);

#endif
