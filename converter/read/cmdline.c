/*
 * cmdline.c: what a traced process's command line says of it (cmdline.h).
 */
#include <string.h>

#include "cmdline.h"

int ft_is_python(const char *cmdline)
{
	const char *end = cmdline + strcspn(cmdline, " "), *base = cmdline;
	for (const char *q = cmdline; q < end; q++)
		if (*q == '/')
			base = q + 1;
	return !strncmp(base, "python", 6);
}
