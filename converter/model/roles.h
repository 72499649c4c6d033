/*
 * roles.h: which traced process is the main one (it feeds the GPU), which
 * are its workers and which are helpers, and the names a user reads for
 * them (docs/ANALYSES.md, "The verdict"). One rule, used by the report
 * (from its analysis) and by the timeline (from a light pre-pass).
 */
#ifndef FT_ROLES_H
#define FT_ROLES_H

#include <stddef.h>
#include <stdint.h>

#include "states.h"
#include "cmdline.h"

struct ft_role_proc {
	int32_t pid, ppid;
	const char *cmdline;
	uint64_t start;           /* its trace's start */
	uint64_t launches, events, batches;
	int32_t rank, world;      /* the launcher's rank of world; world 0: none */
	int chosen;               /* in: the main process, whatever its launches (a straggler) */
	const int32_t *forked;    /* in: the children it forked, in fork order (its fork
	                             records: ft_an_forked), nforked of them */
	int nforked;
	int parent;               /* out: index of its parent, -1: none traced */
	enum ft_proc_role role;   /* out: main, worker (a worker of the main process
	                             or of a rank), rank (another rank's
	                             main process: the one of its rank that launches
	                             most kernels; without launches, the root of its
	                             rank's processes) or helper */
	int worker_no;            /* out: a worker's number among its parent's (the main
	                             process or another rank's main): in the order
	                             they were forked, as PyTorch numbers its DataLoader
	                             workers; those the main recorded no fork of after
	                             them, by start */
	int py_workers;           /* out: a worker whose parent and fellow workers all
	                             run Python (DataLoader workers) */
};

/* parents, the main process (its index, returned) and every role */
int ft_roles(struct ft_role_proc *p, int n);
int ft_role_depth(const struct ft_role_proc *p, int n, int i);
/* the program's base name and its arguments, each path cut to its base
 * name: "python3 train.py --fixed" (60 characters at most) */
void ft_brief_command(const char *cmdline, char *out, size_t cap);
/* what a timeline calls process i: "main: python3 train.py",
 * "DataLoader worker 1 (pid 5562)", "helper: sh -c ...", after "rank 1/4 "
 * in a distributed job */
void ft_role_name(const struct ft_role_proc *p, int n, int i, char *out, size_t cap);

struct ft_process;
/* what a user reads for a thread: Python's name for it ("Thread-1
 * (producer)", "QueueFeederThread"), "MainThread" for a Python process's
 * main thread the program did not rename, else the kernel's name, else
 * "thread TID" */
void ft_thread_label(const struct ft_process *p, int32_t tid, char *out, size_t cap);

/* the launcher's rank identity of p: "rank 1/4" (its length; "" and 0
 * without one), and as JSON under "rank" (null without one) */
int ft_rank_text(const struct ft_process *p, char *out, size_t cap);
/* the same of a rank and world read elsewhere (a report's JSON) */
int ft_rank_words(int32_t rank, int32_t world, char *out, size_t cap);
struct ft_json;
void ft_rank_json(struct ft_json *j, const struct ft_process *p);

#endif
