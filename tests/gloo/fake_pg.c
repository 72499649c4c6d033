/*
 * fake_pg.c: a stand-in for libtorch's ProcessGroupGloo (a test double):
 * linked against libgloo, it calls the collectives through its PLT, as
 * libtorch_cpu does. gloo_prog loads it RTLD_LOCAL, as Python loads
 * torch's libraries, so RTLD_NEXT cannot see libgloo from the preloaded
 * tracer.
 */
#define GLOO_FN(kind, op, sym) void sym(void *o);
#include "../../shim/gloo.def"
#undef GLOO_FN

void pg_allreduce(void *opts) { _ZN4gloo9allreduceERKNS_16AllreduceOptionsE(opts); }
void pg_barrier(void *opts) { _ZN4gloo7barrierERNS_14BarrierOptionsE(opts); }
