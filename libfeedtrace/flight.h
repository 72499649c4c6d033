/*
 * flight.h: the flight recorder (flight.c), for output.c (which keeps
 * chunks through it and writes its windows), the flusher (requests,
 * hangs, steps) and lifecycle.c (fatal signals, exit).
 */
#ifndef FT_FLIGHT_H
#define FT_FLIGHT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "format.h"

#define FT_FLIGHT_DEFAULT_MIB 256       /* the window's bound when only seconds are given */

struct ft_flight_cfg {
	int on;                         /* FEEDTRACE_FLIGHT set and valid */
	uint32_t keep_s;                /* seconds kept, 0: as many as keep_bytes holds */
	uint64_t keep_bytes;            /* the window's bound */
	uint32_t hang_s;                /* FEEDTRACE_FLIGHT_HANG_S */
	int at_exit;                    /* FEEDTRACE_FLIGHT_EXIT */
};
extern struct ft_flight_cfg ft_flight;

void ft_flight_config(void);            /* start-up, after the configuration */
void ft_flight_map(void);               /* the flusher thread, as it starts */
void ft_flight_after_fork_child(void);
/* output.c, for each chunk framed in iov (the header first), bytes in all:
 * 1 if kept in memory, 0 if it goes to the file */
int ft_flight_keep(const struct iovec *iov, int n, uint64_t bytes);
/* output.c's dump: the FLIGHT chunk's payload, then the kept chunks one by
 * one (*cursor 0 at first; each returned chunk leaves memory), then done */
void ft_flight_info(struct ft_flight_info *fi, int why, int detail);
size_t ft_flight_next(uint64_t *cursor, const void **data);
void ft_flight_dumped(void);
void ft_flight_pass(int on);            /* 1: every chunk goes straight to the file */
/* the flusher: a drained ring's records (steps, for the hang detector),
 * and once a cycle, whether to dump now (FT_FLIGHT_*, 0 none; *detail the
 * FLIGHT chunk's) */
void ft_flight_scan(const struct ft_rec *recs, uint64_t n);
int ft_flight_poll(int *detail);

#endif
