/*
 * state.c: the process-wide facts that every part of the runtime reads and
 * only lifecycle.c changes (and capture.c, between a capture window's
 * groups and the idle ones): which hook groups record now (ft_active), the
 * pid the tracer set up for (ft_pid), and the services the wrappers
 * registered at start-up (ft_shim, shim/init.c). In a file of their own so
 * that the files under lifecycle.c (ring, output, flusher) read them
 * without depending on it: calls go down only (tests/unit/test_layers.py).
 */
#include "internal.h"
#include "lifecycle.h"

_Atomic unsigned ft_active;
int ft_pid;
struct ft_shim_ops ft_shim;
