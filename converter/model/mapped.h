/*
 * mapped.h: data read through memory maps (mapped.c): the major page
 * faults of the processes that mapped data files, and those files.
 */
#ifndef FT_MAPPED_H
#define FT_MAPPED_H

#include <stdint.h>

struct ft_report;

#define FT_MAPPED_MIN_FAULTS 8    /* fewer: no finding (a page or two at start) */
#define FT_MAPPED_FILES 4
#define FT_MAPPED_THREADS 4       /* threads named (those with the most faults) */

/* a thread that took faults on mapped data, in a process (not a worker)
 * where more than one thread did */
struct ft_mapped_thread {
	int pid;
	int32_t tid;
	char name[40];            /* its name; "": none known */
	uint64_t faults;
};

struct ft_mapped {
	uint64_t faults;          /* major page faults, summed over those processes */
	uint64_t blkio_ns;        /* their block I/O wait (timed: delay accounting) */
	int timed;
	int nprocs, nworkers;     /* processes that took them; of which workers */
	int main_too;             /* the main process is one of them */
	int said;                 /* a finding: FT_MAPPED_MIN_FAULTS or more */
	char files[FT_MAPPED_FILES][256];   /* the data files mapped (first ones) */
	int nfiles, more_files;
	struct ft_mapped_thread threads[FT_MAPPED_THREADS];  /* most faults first */
	int nthreads, more_threads;
	unsigned char *data;      /* per process: it or an ancestor mapped data */
};

/* r's processes (roles known) looked at: their mappings of data files and
 * their faults since the first one */
void ft_mapped_build(struct ft_report *r);
void ft_mapped_free(struct ft_mapped *m);

#endif
