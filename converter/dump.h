/*
 * dump.h: the command-line tool's subcommands, one entry point each.
 */
#ifndef FT_DUMP_H
#define FT_DUMP_H

#include <stdio.h>

int ft_cmd_dump(int argc, char **argv);
int ft_cmd_run(int argc, char **argv);
int ft_cmd_summary(int argc, char **argv);
void ft_json_string(FILE *out, const char *s);

#endif
