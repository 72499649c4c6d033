/*
 * pyframe_check.c: compiled (-fsyntax-only) by the Makefile when
 * python3.11-dev's headers are installed; fails the build if a number in
 * pyframe.h is not CPython 3.11's. Never linked into the library.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <stddef.h>

#include "pyframe.h"

#if PY_VERSION_HEX >> 16 != PY311_HEX
#error "pyframe_check.c: these are not CPython 3.11's headers"
#endif

#define CHECK(expr) _Static_assert(expr, #expr)

CHECK(offsetof(PyObject, ob_type) == PY_OBJECT_TYPE);
CHECK(offsetof(PyThreadState, cframe) == PY311_TSTATE_CFRAME);
CHECK(offsetof(_PyCFrame, current_frame) == PY311_CFRAME_CURRENT);
CHECK(offsetof(_PyInterpreterFrame, f_code) == PY311_FRAME_CODE);
CHECK(offsetof(_PyInterpreterFrame, previous) == PY311_FRAME_PREVIOUS);
CHECK(offsetof(_PyInterpreterFrame, prev_instr) == PY311_FRAME_PREV_INSTR);
CHECK(offsetof(_PyInterpreterFrame, owner) == PY311_FRAME_OWNER);
CHECK(FRAME_OWNED_BY_GENERATOR == PY311_OWNED_BY_GENERATOR);
CHECK(sizeof(_Py_CODEUNIT) == PY311_CODEUNIT_SIZE);
CHECK(offsetof(PyCodeObject, _co_firsttraceable) == PY311_CODE_FIRSTTRACEABLE);
CHECK(offsetof(PyCodeObject, co_filename) == PY311_CODE_FILENAME);
CHECK(offsetof(PyCodeObject, co_name) == PY311_CODE_NAME);
CHECK(offsetof(PyCodeObject, co_code_adaptive) == PY311_CODE_ADAPTIVE);
CHECK(offsetof(PyASCIIObject, length) == PY311_STR_LENGTH);
CHECK(offsetof(PyASCIIObject, state) == PY311_STR_STATE);
CHECK(sizeof(PyASCIIObject) == PY311_STR_ASCII_DATA);
CHECK(offsetof(PyCompactUnicodeObject, utf8_length) == PY311_STR_UTF8_LENGTH);
CHECK(offsetof(PyCompactUnicodeObject, utf8) == PY311_STR_UTF8);
