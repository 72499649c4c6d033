/*
 * sitebrief.c: a call site's innermost frame, short enough for a
 * report's 80 columns (fkind.h, ft_site_brief).
 */
#include <string.h>

#include "fkind.h"

const char *ft_site_brief(const char *site, int *n)
{
	size_t len = strcspn(site, "\n;");
	const char *colon = memchr(site, ':', len);
	if (colon && colon - site > 3 && !memcmp(colon - 3, ".py", 3)) {
		const char *base = site;
		for (const char *p = site; p < colon; p++)
			if (*p == '/')
				base = p + 1;
		len -= (size_t)(base - site);
		site = base;
	}
	*n = (int)len;
	return site;
}
