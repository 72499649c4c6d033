/*
 * config.h: settings read once from FEEDTRACE_* variables at start-up.
 * A bad value prints one line on stderr and the default stays.
 */
#ifndef FT_CONFIG_H
#define FT_CONFIG_H

#include <stdint.h>

struct ft_config {
	char out_dir[4096];      /* FEEDTRACE_OUT, made absolute; "" = default */
	unsigned hooks;          /* FEEDTRACE_HOOKS: FT_G_* */
	uint32_t ring_kb;        /* FEEDTRACE_BUF_KB: per-thread ring */
	uint32_t flush_ms;       /* FEEDTRACE_FLUSH_MS: longest wait before a ring is written */
	uint32_t mem_mb;         /* FEEDTRACE_MEM_MB: all rings together */
	int zstd_level;          /* FEEDTRACE_ZSTD_LEVEL */
	uint32_t stack_depth;    /* FEEDTRACE_STACK_DEPTH: native frames at GPU waits, 0 = off */
	uint32_t python_frames;  /* FEEDTRACE_PYFRAMES: 1 = Python frames at GPU waits */
	int disabled;            /* FEEDTRACE_DISABLE=1 */
	int redact;              /* FEEDTRACE_REDACT=1: paths and command lines only as hashes */
};

extern struct ft_config ft_cfg;

void ft_config_load(void);
/* Parse helpers shared with the command-line tool; return 0 on success. */
int ft_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);
int ft_parse_hooks(const char *s, unsigned *out);

#endif
