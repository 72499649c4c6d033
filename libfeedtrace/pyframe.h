/*
 * pyframe.h: where CPython 3.11 keeps what a call site needs, as byte
 * offsets: the thread state's current frame, each frame's code object,
 * caller and last instruction, and a code object's file and function
 * names. callsite.c reads these (read-only) when the waiting thread has
 * released the GIL, which is how PyTorch and ctypes.CDLL call the driver.
 * The numbers are facts of CPython 3.11's headers (Include/cpython/
 * pystate.h, Include/internal/pycore_frame.h, Include/cpython/code.h,
 * Include/cpython/unicodeobject.h, x86-64 and aarch64 LP64); with
 * python3.11-dev installed the build checks every one of them against
 * those headers (libfeedtrace/pyframe_check.c). Other versions: no raw walk.
 */
#ifndef FT_PYFRAME_H
#define FT_PYFRAME_H

#define PY311_HEX                  0x030b          /* Py_Version >> 16 */

#define PY_OBJECT_TYPE             8    /* PyObject.ob_type */

#define PY311_TSTATE_CFRAME        56   /* PyThreadState.cframe */
#define PY311_CFRAME_CURRENT       8    /* _PyCFrame.current_frame */

#define PY311_FRAME_CODE           32   /* _PyInterpreterFrame.f_code */
#define PY311_FRAME_PREVIOUS       48   /* _PyInterpreterFrame.previous */
#define PY311_FRAME_PREV_INSTR     56   /* _PyInterpreterFrame.prev_instr */
#define PY311_FRAME_OWNER          69   /* _PyInterpreterFrame.owner (char) */
#define PY311_OWNED_BY_GENERATOR   1    /* FRAME_OWNED_BY_GENERATOR */
#define PY311_CODEUNIT_SIZE        2    /* sizeof(_Py_CODEUNIT) */

#define PY311_CODE_FIRSTTRACEABLE  168  /* PyCodeObject._co_firsttraceable (int) */
#define PY311_CODE_FILENAME        112  /* PyCodeObject.co_filename */
#define PY311_CODE_NAME            120  /* PyCodeObject.co_name */
#define PY311_CODE_ADAPTIVE        184  /* PyCodeObject.co_code_adaptive */

#define PY311_STR_LENGTH           16   /* PyASCIIObject.length */
#define PY311_STR_STATE            32   /* PyASCIIObject.state (bit field word) */
#define PY311_STR_COMPACT_BIT      5    /* state.compact */
#define PY311_STR_ASCII_BIT        6    /* state.ascii */
#define PY311_STR_ASCII_DATA       48   /* sizeof(PyASCIIObject): ASCII text */
#define PY311_STR_UTF8_LENGTH      48   /* PyCompactUnicodeObject.utf8_length */
#define PY311_STR_UTF8             56   /* PyCompactUnicodeObject.utf8 */

#endif
