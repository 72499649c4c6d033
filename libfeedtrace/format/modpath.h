/*
 * modpath.h: the one list of files that hold code or kernel state, not
 * data: module imports (.py, .pyc, .so, anything under a Python library
 * prefix) and pseudo-files (/proc, /sys, /dev). Shared by the recorder
 * (an open of such a file takes no Python call site: shim/io.c) and the
 * converter (their small reads are start-up, never a storm: analysis.c).
 * `python3 -c "import torch"` made 1 558 small reads of 776 such files.
 * Header-only and allocation-free: safe in a hook.
 */
#ifndef FT_MODPATH_H
#define FT_MODPATH_H

#include <string.h>

static inline int ft_modpath_suffix(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static inline int ft_is_module_path(const char *path)
{
	static const char *const suffixes[] = { ".py", ".pyc", ".pyo", ".so", ".pth", ".egg-link" };
	static const char *const parts[] = { "/site-packages/", "/dist-packages/", "/__pycache__/",
					     "/lib/python3", "/lib64/python3", ".so." };
	static const char *const prefixes[] = { "/proc/", "/sys/", "/dev/", "/etc/ld.so" };
	if (!path || !*path)
		return 0;
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
		if (ft_modpath_suffix(path, n, suffixes[i]))
			return 1;
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
		if (strstr(path, parts[i]))
			return 1;
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
		if (strncmp(path, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

#endif
