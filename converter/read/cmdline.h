/*
 * cmdline.h: what a traced process's command line says of it (cmdline.c),
 * for the analyses (steps.c, verdict.c) and the roles (roles.c) alike.
 */
#ifndef FT_CMDLINE_H
#define FT_CMDLINE_H

/* a command line whose program is CPython ("python3", "/usr/bin/python3.11") */
int ft_is_python(const char *cmdline);

#endif
