/*
 * storm.h: small-read storms of one process (storm.c), fed by reads.c.
 * Storms and candidates go to the sink as FT_FK_STORM findings, as each
 * burst ends.
 */
#ifndef FT_STORM_H
#define FT_STORM_H

#include <stdint.h>

#include "analysis.h"
#include "reader.h"

struct ft_storm;

struct ft_storm *ft_storm_new(const struct ft_process *p, const struct ft_an_opts *o,
			      const struct ft_an_sink *sink);
/* an open of fd whose Python site (0: none taken) opened it */
void ft_storm_opener(struct ft_storm *s, int32_t fd, uint32_t site);
/* an open of path: within a burst, another pass over one of its files */
void ft_storm_opened(struct ft_storm *s, uint32_t path);
/* a small read of path (0: unknown) through fd (-1: none) that got bytes */
void ft_storm_read(struct ft_storm *s, const struct ft_event *ev, uint32_t path, int32_t fd,
		   uint64_t got);
/* the last burst closed; the storms found (candidates not counted) */
uint64_t ft_storm_finish(struct ft_storm *s);
void ft_storm_free(struct ft_storm *s);

#endif
