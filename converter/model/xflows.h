/*
 * xflows.h: flows between processes (xflows.c): each message a producer
 * (a DataLoader worker) writes into a pipe, linked to the read in which
 * the consumer (the main process) receives it. Found in a light pass over
 * the records before the conversion; looked up as the slices are written.
 */
#ifndef FT_XFLOWS_H
#define FT_XFLOWS_H

#include <stdint.h>

#include "reader.h"
#include "roles.h"

struct ft_xflows;
struct ft_xflows *ft_xflows_new(int nprocs);
/* every event of process i, in the pre-pass */
void ft_xflows_event(struct ft_xflows *x, int i, const struct ft_event *ev);
/* pairs writes and reads, once every process was fed; rl: parents */
void ft_xflows_pair(struct ft_xflows *x, const struct ft_role_proc *rl);
/* the flow of process i's call at (tid, ts): its id, and 1 when it ends
 * there (the read); 0 when none */
uint64_t ft_xflows_of(const struct ft_xflows *x, int i, int32_t tid, uint64_t ts,
		      int *terminating);
uint64_t ft_xflows_count(const struct ft_xflows *x);
void ft_xflows_free(struct ft_xflows *x);

#endif
