/*
 * dump.h: the command-line tool's subcommands, one entry point each.
 */
#ifndef FT_DUMP_H
#define FT_DUMP_H

#include <stdio.h>

int ft_cmd_dump(int argc, char **argv);
int ft_cmd_run(int argc, char **argv);
int ft_cmd_open(int argc, char **argv);     /* open.c */
int ft_cmd_summary(int argc, char **argv);
int ft_cmd_convert(int argc, char **argv);   /* convert.c */
int ft_cmd_report(int argc, char **argv);    /* report.c */
int ft_cmd_diff(int argc, char **argv);      /* diff.c */
int ft_report_print(const char *dir, FILE *out);
void ft_json_string(FILE *out, const char *s);

#endif
