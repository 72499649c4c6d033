/*
 * fake_gloo.c: a stand-in libgloo.so.0 for tests (a test double): the ten
 * collectives shim/gloo.def wraps, by their mangled C++ names, each taking
 * an options object whose first word points at the context, as gloo's
 * std::shared_ptr<gloo::Context> member does. A call adds one to the
 * context's count of calls (the test sees the real function ran) and
 * sleeps for the context's delay (a wait for the other ranks).
 */
#define _GNU_SOURCE
#include <time.h>

struct ctx { int rank, size; int calls; int delay_us; };
struct opts { struct ctx *ctx; void *ctrl; };

static void run(void *o)
{
	struct ctx *c = ((struct opts *)o)->ctx;
	__atomic_add_fetch(&c->calls, 1, __ATOMIC_SEQ_CST);
	struct timespec ts = { c->delay_us / 1000000, (long)(c->delay_us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

#define GLOO_FN(kind, op, sym) void sym(void *o) { run(o); }
#include "../../shim/gloo.def"
