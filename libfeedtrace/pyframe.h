/*
 * pyframe.h: where CPython 3.9 to 3.12 keep what a call site needs, as
 * byte offsets: the thread state's current frame, each frame's code
 * object, caller and instruction, a code object's file and function
 * names, first line and line table, and the text of a str. pywalk.c
 * reads these (read-only) when the waiting thread has released the GIL,
 * which is how PyTorch and ctypes.CDLL call the driver. The numbers are
 * facts of each version's headers (Include/cpython/pystate.h,
 * Include/cpython/frameobject.h (3.9, 3.10), Include/internal/
 * pycore_frame.h (3.11, 3.12), Include/cpython/code.h, Include/cpython/
 * unicodeobject.h, Include/cpython/bytesobject.h; x86-64 and aarch64
 * LP64); the build checks every one against the headers of each version
 * it finds (libfeedtrace/pyframe_check.c). CPython 3.13 and later publish
 * their own offsets in _Py_DebugOffsets, the first member of _PyRuntime:
 * for those, only where in _Py_DebugOffsets each offset sits (its layout
 * changes with the minor version), and the layout of str and bytes.
 */
#ifndef FT_PYFRAME_H
#define FT_PYFRAME_H

#define PY_OBJECT_TYPE             8    /* PyObject.ob_type */
#define PY_BYTES_SIZE              16   /* PyBytesObject.ob_base.ob_size */
#define PY_BYTES_DATA              32   /* PyBytesObject.ob_sval */
#define PY_STR_LENGTH              16   /* PyASCIIObject.length */
#define PY_STR_STATE               32   /* PyASCIIObject.state (bit field word) */
#define PY_STR_COMPACT_BIT         5    /* state.compact */
#define PY_STR_ASCII_BIT           6    /* state.ascii */

/* 3.9 and 3.10: frames are PyFrameObjects, f_lasti the last instruction */
#define PY39_TSTATE_FRAME          24   /* PyThreadState.frame */
#define PY39_FRAME_BACK            24   /* PyFrameObject.f_back */
#define PY39_FRAME_CODE            32   /* PyFrameObject.f_code */
#define PY39_FRAME_LASTI           104  /* PyFrameObject.f_lasti (int, bytes) */
#define PY39_CODE_FIRSTLINENO      40   /* PyCodeObject.co_firstlineno (int) */
#define PY39_CODE_FILENAME         104  /* PyCodeObject.co_filename */
#define PY39_CODE_NAME             112  /* PyCodeObject.co_name */
#define PY39_CODE_LNOTAB           120  /* PyCodeObject.co_lnotab (bytes) */

#define PY310_TSTATE_FRAME         24   /* PyThreadState.frame */
#define PY310_FRAME_BACK           24   /* PyFrameObject.f_back */
#define PY310_FRAME_CODE           32   /* PyFrameObject.f_code */
#define PY310_FRAME_LASTI          96   /* PyFrameObject.f_lasti (int, code units) */
#define PY310_CODE_FIRSTLINENO     40   /* PyCodeObject.co_firstlineno (int) */
#define PY310_CODE_FILENAME        104  /* PyCodeObject.co_filename */
#define PY310_CODE_NAME            112  /* PyCodeObject.co_name */
#define PY310_CODE_LINETABLE       120  /* PyCodeObject.co_linetable (bytes) */

/* 3.9 to 3.11: a str has a wstr pointer; 3.12 and later do not */
#define PY39_STR_ASCII_DATA        48   /* sizeof(PyASCIIObject): ASCII text */
#define PY39_STR_UTF8_LENGTH       48   /* PyCompactUnicodeObject.utf8_length */
#define PY39_STR_UTF8              56   /* PyCompactUnicodeObject.utf8 */

/* 3.11 and 3.12: _PyInterpreterFrames, reached through a _PyCFrame */
#define PY311_TSTATE_CFRAME        56   /* PyThreadState.cframe */
#define PY311_CFRAME_CURRENT       8    /* _PyCFrame.current_frame */
#define PY311_FRAME_CODE           32   /* _PyInterpreterFrame.f_code */
#define PY311_FRAME_PREVIOUS       48   /* _PyInterpreterFrame.previous */
#define PY311_FRAME_PREV_INSTR     56   /* _PyInterpreterFrame.prev_instr */
#define PY311_FRAME_OWNER          69   /* _PyInterpreterFrame.owner (char) */
#define PY311_OWNED_BY_GENERATOR   1    /* FRAME_OWNED_BY_GENERATOR */
#define PY311_CODEUNIT_SIZE        2    /* sizeof(_Py_CODEUNIT) */
#define PY311_CODE_FIRSTLINENO     72   /* PyCodeObject.co_firstlineno (int) */
#define PY311_CODE_FILENAME        112  /* PyCodeObject.co_filename */
#define PY311_CODE_NAME            120  /* PyCodeObject.co_name */
#define PY311_CODE_LINETABLE       136  /* PyCodeObject.co_linetable (bytes) */
#define PY311_CODE_FIRSTTRACEABLE  168  /* PyCodeObject._co_firsttraceable (int) */
#define PY311_CODE_ADAPTIVE        184  /* PyCodeObject.co_code_adaptive */

#define PY312_TSTATE_CFRAME        56   /* PyThreadState.cframe */
#define PY312_CFRAME_CURRENT       0    /* _PyCFrame.current_frame */
#define PY312_FRAME_CODE           0    /* _PyInterpreterFrame.f_code */
#define PY312_FRAME_PREVIOUS       8    /* _PyInterpreterFrame.previous */
#define PY312_FRAME_PREV_INSTR     56   /* _PyInterpreterFrame.prev_instr */
#define PY312_FRAME_OWNER          70   /* _PyInterpreterFrame.owner (char) */
#define PY312_OWNED_BY_GENERATOR   1    /* FRAME_OWNED_BY_GENERATOR */
#define PY312_OWNED_BY_CSTACK      3    /* FRAME_OWNED_BY_CSTACK (3.12, 3.13): an entry frame;
					   3.14's entry frames are 3 and 4 */
#define PY312_CODE_FIRSTLINENO     68   /* PyCodeObject.co_firstlineno (int) */
#define PY312_CODE_FILENAME        112  /* PyCodeObject.co_filename */
#define PY312_CODE_NAME            120  /* PyCodeObject.co_name */
#define PY312_CODE_LINETABLE       136  /* PyCodeObject.co_linetable (bytes) */
#define PY312_CODE_FIRSTTRACEABLE  176  /* PyCodeObject._co_firsttraceable (int) */
#define PY312_CODE_ADAPTIVE        192  /* PyCodeObject.co_code_adaptive */
#define PY312_STR_ASCII_DATA       40   /* sizeof(PyASCIIObject): ASCII text */
#define PY312_STR_UTF8_LENGTH      40   /* PyCompactUnicodeObject.utf8_length */
#define PY312_STR_UTF8             48   /* PyCompactUnicodeObject.utf8 */

/* _Py_DebugOffsets (Include/internal/pycore_runtime.h in 3.13,
 * pycore_debug_offsets.h later): byte positions of what pywalk.c reads.
 * Each group of offsets starts with the size of CPython's struct. */
#define PYDBG_COOKIE               0    /* char[8], "xdebugpy" */
#define PYDBG_VERSION              8    /* PY_VERSION_HEX (uint64) */
#define PYDBG_FREE_THREADED        16   /* Py_GIL_DISABLED build */
#define PYDBG313_TSTATE_SIZE       152  /* thread_state.size */
#define PYDBG313_TSTATE_FRAME      184  /* thread_state.current_frame */
#define PYDBG313_FRAME_SIZE        224  /* interpreter_frame.size */
#define PYDBG313_FRAME_PREVIOUS    232  /* interpreter_frame.previous */
#define PYDBG313_FRAME_EXECUTABLE  240  /* interpreter_frame.executable */
#define PYDBG313_FRAME_INSTR       248  /* interpreter_frame.instr_ptr */
#define PYDBG313_FRAME_OWNER       264  /* interpreter_frame.owner */
#define PYDBG313_CODE_SIZE         272  /* code_object.size */
#define PYDBG313_CODE_FILENAME     280  /* code_object.filename */
#define PYDBG313_CODE_NAME         288  /* code_object.name */
#define PYDBG313_CODE_LINETABLE    304  /* code_object.linetable */
#define PYDBG313_CODE_FIRSTLINENO  312  /* code_object.firstlineno */
#define PYDBG313_CODE_ADAPTIVE     344  /* code_object.co_code_adaptive */
#define PYDBG313_OBJECT_SIZE       352  /* pyobject.size */
#define PYDBG313_OBJECT_TYPE       360  /* pyobject.ob_type */
/* 3.14: interpreter_state has 3 more offsets, interpreter_frame and
 * code_object 2 and 1 more at their ends (written from CPython's sources;
 * checked where 3.14's headers are, and by pywalk.c at start-up, which
 * refuses a table that does not hold together) */
#define PYDBG314_SHIFT_TSTATE      24   /* interpreter_state's 3 more */
#define PYDBG314_SHIFT_CODE        40   /* and interpreter_frame's 2 */
#define PYDBG314_SHIFT_OBJECT      48   /* and code_object's 1 */

#endif
