/*
 * symbolize.h: native call sites read offline. A recorded stack ("#S:"
 * return addresses) is looked up in the files of the process's modules
 * (MODULES chunks) with elfutils' libdwfl: function names from .symtab and
 * .dynsym, file:line from DWARF, inlined frames expanded, C++ names
 * demangled (libiberty's cplus_demangle).
 */
#ifndef FT_SYMBOLIZE_H
#define FT_SYMBOLIZE_H

#include <stdint.h>
#include <stdio.h>

#include "reader.h"

/* --symbols DIR: also look for debug files (and copies of the modules) there */
void ft_symbols_add_dir(const char *dir);

/* A call-site id as text. A native stack: its headline (the innermost
 * frame of the program's own code "<-" its caller), then every frame, one
 * per line, innermost first: "function (file.c:42)", "function+0xoff
 * (module)" without line information, "module+0xoff" without a symbol
 * (the offset is the ELF file's address, as addr2line takes it). Without
 * MODULES chunks, the recorder's SYMBOLS text; else the string itself. */
const char *ft_site_text(const struct ft_process *p, uint32_t id);

/* The first call-site id whose text is id's: one key for one site (an
 * unrolled loop calls from several return addresses of one line). */
uint32_t ft_site_key(const struct ft_process *p, uint32_t id);

/* The symbol whose memory holds addr ("launch_lock", "table+0x10"), from
 * the symbol table of the module it falls in; NULL when none knows it. */
const char *ft_data_symbol(const struct ft_process *p, uint64_t addr);

/* The lines learnt while symbolising (a module rebuilt after the run,
 * modules without symbols and what to do), each once; n of them. */
int ft_symbols_notes(const char ***lines);
/* prints them, each with prefix */
void ft_symbols_print_notes(FILE *out, const char *prefix);

#endif
