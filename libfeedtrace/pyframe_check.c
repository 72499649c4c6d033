/*
 * pyframe_check.c: compiled (-fsyntax-only) by the Makefile against the
 * headers of each CPython it finds (3.9 to 3.14); fails the build if a
 * number in pyframe.h is not that version's. Never linked into the library.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#if PY_MINOR_VERSION >= 11
#include <internal/pycore_frame.h>
#endif
#if PY_MINOR_VERSION >= 13
#include <internal/pycore_runtime.h>
#endif
#include <stddef.h>

#include "pyframe.h"

#define CHECK(expr) _Static_assert(expr, #expr)

CHECK(offsetof(PyObject, ob_type) == PY_OBJECT_TYPE);
CHECK(offsetof(PyBytesObject, ob_base.ob_size) == PY_BYTES_SIZE);
CHECK(offsetof(PyBytesObject, ob_sval) == PY_BYTES_DATA);
CHECK(offsetof(PyASCIIObject, length) == PY_STR_LENGTH);
CHECK(offsetof(PyASCIIObject, state) == PY_STR_STATE);

#if PY_MAJOR_VERSION != 3 || PY_MINOR_VERSION < 9 || PY_MINOR_VERSION > 14
#error "pyframe_check.c: pyframe.h has no table for these headers' CPython"
#elif PY_MINOR_VERSION == 9
CHECK(offsetof(PyThreadState, frame) == PY39_TSTATE_FRAME);
CHECK(offsetof(PyFrameObject, f_back) == PY39_FRAME_BACK);
CHECK(offsetof(PyFrameObject, f_code) == PY39_FRAME_CODE);
CHECK(offsetof(PyFrameObject, f_lasti) == PY39_FRAME_LASTI);
CHECK(offsetof(PyCodeObject, co_firstlineno) == PY39_CODE_FIRSTLINENO);
CHECK(offsetof(PyCodeObject, co_filename) == PY39_CODE_FILENAME);
CHECK(offsetof(PyCodeObject, co_name) == PY39_CODE_NAME);
CHECK(offsetof(PyCodeObject, co_lnotab) == PY39_CODE_LNOTAB);
#elif PY_MINOR_VERSION == 10
CHECK(offsetof(PyThreadState, frame) == PY310_TSTATE_FRAME);
CHECK(offsetof(PyFrameObject, f_back) == PY310_FRAME_BACK);
CHECK(offsetof(PyFrameObject, f_code) == PY310_FRAME_CODE);
CHECK(offsetof(PyFrameObject, f_lasti) == PY310_FRAME_LASTI);
CHECK(offsetof(PyCodeObject, co_firstlineno) == PY310_CODE_FIRSTLINENO);
CHECK(offsetof(PyCodeObject, co_filename) == PY310_CODE_FILENAME);
CHECK(offsetof(PyCodeObject, co_name) == PY310_CODE_NAME);
CHECK(offsetof(PyCodeObject, co_linetable) == PY310_CODE_LINETABLE);
#elif PY_MINOR_VERSION == 11
CHECK(offsetof(PyThreadState, cframe) == PY311_TSTATE_CFRAME);
CHECK(offsetof(_PyCFrame, current_frame) == PY311_CFRAME_CURRENT);
CHECK(offsetof(_PyInterpreterFrame, f_code) == PY311_FRAME_CODE);
CHECK(offsetof(_PyInterpreterFrame, previous) == PY311_FRAME_PREVIOUS);
CHECK(offsetof(_PyInterpreterFrame, prev_instr) == PY311_FRAME_PREV_INSTR);
CHECK(offsetof(_PyInterpreterFrame, owner) == PY311_FRAME_OWNER);
CHECK(FRAME_OWNED_BY_GENERATOR == PY311_OWNED_BY_GENERATOR);
CHECK(offsetof(PyCodeObject, co_firstlineno) == PY311_CODE_FIRSTLINENO);
CHECK(offsetof(PyCodeObject, co_filename) == PY311_CODE_FILENAME);
CHECK(offsetof(PyCodeObject, co_name) == PY311_CODE_NAME);
CHECK(offsetof(PyCodeObject, co_linetable) == PY311_CODE_LINETABLE);
CHECK(offsetof(PyCodeObject, _co_firsttraceable) == PY311_CODE_FIRSTTRACEABLE);
CHECK(offsetof(PyCodeObject, co_code_adaptive) == PY311_CODE_ADAPTIVE);
#elif PY_MINOR_VERSION == 12
CHECK(offsetof(PyThreadState, cframe) == PY312_TSTATE_CFRAME);
CHECK(offsetof(_PyCFrame, current_frame) == PY312_CFRAME_CURRENT);
CHECK(offsetof(_PyInterpreterFrame, f_code) == PY312_FRAME_CODE);
CHECK(offsetof(_PyInterpreterFrame, previous) == PY312_FRAME_PREVIOUS);
CHECK(offsetof(_PyInterpreterFrame, prev_instr) == PY312_FRAME_PREV_INSTR);
CHECK(offsetof(_PyInterpreterFrame, owner) == PY312_FRAME_OWNER);
CHECK(FRAME_OWNED_BY_GENERATOR == PY312_OWNED_BY_GENERATOR);
CHECK(FRAME_OWNED_BY_CSTACK == PY312_OWNED_BY_CSTACK);
CHECK(offsetof(PyCodeObject, co_firstlineno) == PY312_CODE_FIRSTLINENO);
CHECK(offsetof(PyCodeObject, co_filename) == PY312_CODE_FILENAME);
CHECK(offsetof(PyCodeObject, co_name) == PY312_CODE_NAME);
CHECK(offsetof(PyCodeObject, co_linetable) == PY312_CODE_LINETABLE);
CHECK(offsetof(PyCodeObject, _co_firsttraceable) == PY312_CODE_FIRSTTRACEABLE);
CHECK(offsetof(PyCodeObject, co_code_adaptive) == PY312_CODE_ADAPTIVE);
#else   /* 3.13, 3.14: where _Py_DebugOffsets holds the offsets read */
#define DBG(field) offsetof(_Py_DebugOffsets, field)
#if PY_MINOR_VERSION >= 14
#define TS PYDBG314_SHIFT_TSTATE
#define CO PYDBG314_SHIFT_CODE
#define OB PYDBG314_SHIFT_OBJECT
#else
#define TS 0
#define CO 0
#define OB 0
#endif
CHECK(DBG(cookie) == PYDBG_COOKIE && DBG(version) == PYDBG_VERSION);
CHECK(DBG(free_threaded) == PYDBG_FREE_THREADED);
CHECK(DBG(thread_state.size) == PYDBG313_TSTATE_SIZE + TS);
CHECK(DBG(thread_state.current_frame) == PYDBG313_TSTATE_FRAME + TS);
CHECK(DBG(interpreter_frame.size) == PYDBG313_FRAME_SIZE + TS);
CHECK(DBG(interpreter_frame.previous) == PYDBG313_FRAME_PREVIOUS + TS);
CHECK(DBG(interpreter_frame.executable) == PYDBG313_FRAME_EXECUTABLE + TS);
CHECK(DBG(interpreter_frame.instr_ptr) == PYDBG313_FRAME_INSTR + TS);
CHECK(DBG(interpreter_frame.owner) == PYDBG313_FRAME_OWNER + TS);
CHECK(DBG(code_object.size) == PYDBG313_CODE_SIZE + CO);
CHECK(DBG(code_object.filename) == PYDBG313_CODE_FILENAME + CO);
CHECK(DBG(code_object.name) == PYDBG313_CODE_NAME + CO);
CHECK(DBG(code_object.linetable) == PYDBG313_CODE_LINETABLE + CO);
CHECK(DBG(code_object.firstlineno) == PYDBG313_CODE_FIRSTLINENO + CO);
CHECK(DBG(code_object.co_code_adaptive) == PYDBG313_CODE_ADAPTIVE + CO);
CHECK(DBG(pyobject.size) == PYDBG313_OBJECT_SIZE + OB);
CHECK(DBG(pyobject.ob_type) == PYDBG313_OBJECT_TYPE + OB);
CHECK(FRAME_OWNED_BY_GENERATOR == PY312_OWNED_BY_GENERATOR);
/* the owners above a frame object's are entry frames, no Python frame */
CHECK(FRAME_OWNED_BY_FRAME_OBJECT + 1 == PY312_OWNED_BY_CSTACK);
CHECK(offsetof(PyCompactUnicodeObject, utf8_length) == PY312_STR_UTF8_LENGTH);
#endif

#if PY_MINOR_VERSION >= 11
CHECK(sizeof(_Py_CODEUNIT) == PY311_CODEUNIT_SIZE);
#endif
#if PY_MINOR_VERSION <= 11
CHECK(sizeof(PyASCIIObject) == PY39_STR_ASCII_DATA);
CHECK(offsetof(PyCompactUnicodeObject, utf8_length) == PY39_STR_UTF8_LENGTH);
CHECK(offsetof(PyCompactUnicodeObject, utf8) == PY39_STR_UTF8);
#else
CHECK(sizeof(PyASCIIObject) == PY312_STR_ASCII_DATA);
CHECK(offsetof(PyCompactUnicodeObject, utf8_length) == PY312_STR_UTF8_LENGTH);
CHECK(offsetof(PyCompactUnicodeObject, utf8) == PY312_STR_UTF8);
#endif
