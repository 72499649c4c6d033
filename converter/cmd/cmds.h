/*
 * cmds.h: the command-line tool's commands, one entry point each, called
 * by main.c (through its table of commands: name, entry point, line of
 * the usage text) with the arguments after the command's name. Each parses
 * its own options with one getopt_long table (cli.h) in the file named.
 */
#ifndef FT_CMDS_H
#define FT_CMDS_H

int ft_cmd_dump(int argc, char **argv);      /* dump.c */
int ft_cmd_summary(int argc, char **argv);   /* dump.c: dump --summary */
int ft_cmd_run(int argc, char **argv);       /* run.c */
int ft_cmd_open(int argc, char **argv);      /* open.c */
int ft_cmd_convert(int argc, char **argv);   /* cmd_convert.c */
int ft_cmd_report(int argc, char **argv);    /* cmd_report.c */
int ft_cmd_diff(int argc, char **argv);      /* cmd_diff.c */
int ft_cmd_ranks(int argc, char **argv);     /* cmd_ranks.c */
int ft_cmd_capture(int argc, char **argv);   /* cmd_capture.c */
int ft_cmd_flight(int argc, char **argv);    /* cmd_flight.c */

#endif
