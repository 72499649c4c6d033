/*
 * config.c: reads FEEDTRACE_* once, at start-up (never from a hook): the
 * numbers and flags as config.def lists them, the directory and the hook
 * groups by hand.
 * Parsing is strict: a value that is too long, not a number, or out of
 * range is refused with one line on stderr, and the default is kept.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "format.h"
#include "log.h"

struct ft_config ft_cfg;

int ft_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	if (!s || !*s || strlen(s) > 10)
		return -1;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	unsigned long v = strtoul(s, NULL, 10);
	if (v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static const struct {
	const char *name;
	unsigned bits;
} hook_names[] = {
	{"io", FT_G_IO}, {"lock", FT_G_LOCK}, {"cuda", FT_G_CUDA},
	{"proc", FT_G_PROC}, {"all", FT_G_ALL}, {"none", 0},
};

/* "io,lock" -> FT_G_IO|FT_G_LOCK. Process events are always on. */
int ft_parse_hooks(const char *s, unsigned *out)
{
	unsigned bits = 0;
	if (!s || !*s || strlen(s) > 64) /* empty: a mistake, not "nothing" */
		return -1;
	while (*s) {
		size_t n = strcspn(s, ",");
		size_t i;
		for (i = 0; i < sizeof hook_names / sizeof hook_names[0]; i++)
			if (strlen(hook_names[i].name) == n &&
			    memcmp(hook_names[i].name, s, n) == 0)
				break;
		if (i == sizeof hook_names / sizeof hook_names[0])
			return -1;
		bits |= hook_names[i].bits;
		s += n;
		if (*s == ',')
			s++;
	}
	*out = bits | FT_G_PROC;
	return 0;
}

static void load_flag(const char *var, int if_bad, int *field)
{
	const char *v = getenv(var);
	if (!v)
		return;
	if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
		ft_log("feedtrace: %s=\"%.40s\" is neither 0 nor 1; using %d", var, v, if_bad);
	*field = strcmp(v, "0") == 0 ? 0 : strcmp(v, "1") == 0 ? 1 : if_bad;
}

static void load_u32(const char *var, uint32_t lo, uint32_t hi, uint32_t *field)
{
	const char *v = getenv(var);
	if (!v)
		return;
	if (ft_parse_u32(v, lo, hi, field) != 0)
		ft_log("feedtrace: %s=\"%.40s\" is not a whole number from %u to %u; using %u",
		       var, v, lo, hi, *field);
}

void ft_config_load(void)
{
	memset(&ft_cfg, 0, sizeof ft_cfg);
	ft_cfg.hooks = FT_G_ALL;
#define CFG_U32(name, field, dflt, lo, hi) ft_cfg.field = dflt;
#define CFG_FLAG(name, field, if_bad) ft_cfg.field = 0;
#define CFG_TEXT(name, where)
#include "config.def"
#undef CFG_U32
#undef CFG_FLAG
#define CFG_U32(name, field, dflt, lo, hi) load_u32("FEEDTRACE_" #name, lo, hi, &ft_cfg.field);
#define CFG_FLAG(name, field, if_bad) load_flag("FEEDTRACE_" #name, if_bad, &ft_cfg.field);
#include "config.def"
#undef CFG_U32
#undef CFG_FLAG
#undef CFG_TEXT

	const char *v = getenv("FEEDTRACE_OUT");
	if (v && *v) {
		if (strlen(v) >= 3800)
			ft_log("feedtrace: FEEDTRACE_OUT is longer than 3800 bytes; using the default directory");
		else if (v[0] == '/')
			strcpy(ft_cfg.out_dir, v);
		else if (getcwd(ft_cfg.out_dir, sizeof ft_cfg.out_dir - strlen(v) - 1) != NULL) {
			/* room was left for "/" and v (a relative path in a deep
			 * directory must not fall back to the default silently) */
			strcat(ft_cfg.out_dir, "/");
			strcat(ft_cfg.out_dir, v);
		} else {
			ft_cfg.out_dir[0] = 0;
			ft_log("feedtrace: FEEDTRACE_OUT=\"%.40s\" is relative and the current directory is too long or unreadable; using the default directory", v);
		}
	}

	v = getenv("FEEDTRACE_HOOKS");
	if (v && ft_parse_hooks(v, &ft_cfg.hooks) != 0)
		ft_log("feedtrace: FEEDTRACE_HOOKS=\"%.40s\" is not a comma list of io,lock,cuda,proc,all,none; using all", v);

	/* ring size must be a power of two: round down */
	uint32_t kb = ft_cfg.ring_kb;
	while (kb & (kb - 1))
		kb &= kb - 1;
	ft_cfg.ring_kb = kb;
}
