/* pyinject.h: the Python-side instrumentation on a Python program's path (pyinject.c) */
#ifndef FT_PYINJECT_H
#define FT_PYINJECT_H
void ft_pyinject(void);
#endif
