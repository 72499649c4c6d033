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
	/* the numbers and flags of config.def: ring_kb (per-thread ring),
	 * flush_ms (longest wait before a ring is written), mem_mb (all rings
	 * together), zstd_level, stack_depth (native frames at GPU waits, 0 =
	 * off), python_frames, redact (paths and command lines only as hashes),
	 * disabled, pytorch (the Python-side instrumentation, pyinject.c) */
#define CFG_U32(name, field, dflt, lo, hi) uint32_t field;
#define CFG_FLAG(name, field, if_bad) int field;
#define CFG_TEXT(name, where)
#include "config.def"
#undef CFG_U32
#undef CFG_FLAG
#undef CFG_TEXT
};
extern struct ft_config ft_cfg;

void ft_config_load(void);
/* Parse helpers shared with the command-line tool; return 0 on success. */
int ft_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);
int ft_parse_hooks(const char *s, unsigned *out);

#endif
