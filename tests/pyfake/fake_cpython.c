/*
 * fake_cpython.c: a program that looks like CPython 3.13 to
 * libfeedtrace/pywalk.c at start-up (the symbols it looks up, exported as
 * CPython's own executable exports them), with a _PyRuntime whose
 * _Py_DebugOffsets a -D define spoils: COOKIE, VERSION, FREE_THREADED,
 * OB_TYPE (the PyObject's type offset, which tells a table that does not
 * hold together). tests/traced/test_pyversions.py builds one per case and reads
 * the tracer's line on stderr. Byte positions are 3.13's (pyframe.h).
 */
#include <stdint.h>

#ifndef COOKIE
#define COOKIE "xdebugpy"
#endif
#ifndef VERSION
#define VERSION 0x030d00f0
#endif
#ifndef FREE_THREADED
#define FREE_THREADED 0
#endif
#ifndef OB_TYPE
#define OB_TYPE 8
#endif

#define AT(byte) [((byte) - 8) / 8]

const unsigned long Py_Version = 0x030d00f0;

struct runtime {
	char cookie[8];
	uint64_t word[64];
} _PyRuntime = { COOKIE, {
	AT(8) = VERSION, AT(16) = FREE_THREADED,
	AT(152) = 400, AT(184) = 56,                            /* thread state */
	AT(224) = 80, AT(232) = 8, AT(240) = 0, AT(248) = 56, AT(264) = 70,   /* frame */
	AT(272) = 200, AT(280) = 112, AT(288) = 120, AT(304) = 136,    /* code object */
	AT(312) = 68, AT(344) = 192,
	AT(352) = 16, AT(360) = OB_TYPE,                        /* PyObject */
} };

long PyCode_Type[8], PyUnicode_Type[8], PyBytes_Type[8], PyFrame_Type[8], _Py_NoneStruct[2];

int Py_IsInitialized(void) { return 1; }
int PyGILState_Check(void) { return 0; }
void *PyGILState_GetThisThreadState(void) { return 0; }

int main(void)
{
	return _PyRuntime.cookie[0] == 0;
}
