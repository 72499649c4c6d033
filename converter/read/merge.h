/*
 * merge.h: one process's events in (near) time order across its threads.
 * A k-way merge over per-thread FIFOs fed in file order; an event is
 * released once it is older than the newest event seen by the horizon.
 */
#ifndef FT_MERGE_H
#define FT_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

struct ft_merge_opts {
	uint64_t horizon_ns;     /* reorder window (default 1 s) */
	size_t max_bytes;        /* buffered bytes before forced release (default 64 MiB) */
};

struct ft_merge_stats {
	uint64_t events;         /* delivered */
	uint64_t late;           /* delivered after a later-starting event */
	uint64_t forced;         /* released early because the buffer was full */
	size_t peak_bytes;       /* most bytes buffered at once */
};

#define FT_MERGE_HORIZON_DEFAULT 1000000000ull
#define FT_MERGE_BYTES_DEFAULT ((size_t)64 << 20)

/* Streams p's events to fn in start-time order (within the guarantees in
 * docs/ANALYSES.md). ev->rec stays valid until fn returns. A non-zero
 * return of fn stops the stream; it is returned. */
int ft_merge_events(struct ft_process *p, const struct ft_merge_opts *o,
		    ft_event_fn fn, void *arg, FILE *err, struct ft_merge_stats *st);

#endif
