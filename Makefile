# feedtrace: build, test, demo, bench.
#   make            library (build/libfeedtrace.so) and tool (build/feedtrace)
#   make demo       installs missing Debian packages, builds, runs the demo
#   make test       installs missing Debian packages, builds, runs every test
#   make bench      benchmarks, rewrites docs/BENCHMARKS.md
#   make install PREFIX=/usr/local

.DEFAULT_GOAL := all

BUILD   ?= build
PREFIX  ?= /usr/local
CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g -Wall -Wextra -fPIC -D_GNU_SOURCE -std=gnu11
SANFLAGS ?=
CFLAGS  += $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
PYTHON  ?= /usr/bin/python3

# CUDA headers are optional: the CUDA hooks declare what they need when absent.
CUDA_HOME ?= $(wildcard /usr/local/cuda)
ifneq ($(CUDA_HOME),)
ifneq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
CUDA_CFLAGS = -I$(CUDA_HOME)/include
endif
endif

# CPython's headers are optional too: with them the layouts that
# libfeedtrace/pywalk.c reads (libfeedtrace/pyframe.h) are checked against
# CPython's own, for each of 3.9 to 3.14 whose headers (with their internal
# ones) are here: Debian's python3.X-dev, pyenv's installs.
PYENV_ROOT ?= $(HOME)/.pyenv
PY_VERSIONS = 3.9 3.10 3.11 3.12 3.13 3.14
PY_INCS = $(sort $(patsubst %/internal/,%,$(wildcard $(foreach v,$(PY_VERSIONS),\
          /usr/include/python$(v)/internal/ $(PYENV_ROOT)/versions/$(v).*/include/python$(v)/internal/))))

LIB_SRCS = libfeedtrace/state.c libfeedtrace/clock.c libfeedtrace/config.c libfeedtrace/log.c \
           libfeedtrace/ring.c libfeedtrace/strtab.c libfeedtrace/fdkind.c libfeedtrace/strrefs.c libfeedtrace/output.c \
           libfeedtrace/flusher.c libfeedtrace/modules.c libfeedtrace/lifecycle.c \
           libfeedtrace/dlreal.c libfeedtrace/callsite.c libfeedtrace/pywalk.c libfeedtrace/rank.c \
           libfeedtrace/faults.c libfeedtrace/pyinject.c \
           libfeedtrace/schedstat.c libfeedtrace/runq.c libfeedtrace/capture.c \
           libfeedtrace/flight.c \
           shim/real.c shim/io.c shim/lock.c shim/process.c \
           shim/dl.c shim/cuda.c shim/nvtx.c shim/solo.c shim/thread.c shim/wait.c \
           shim/gloo.c shim/gpu_time.c shim/init.c
# The library exports its wrappers only (shim/*.c mark them); everything
# else is hidden, so internal calls and globals need no PLT or GOT.
LIB_CFLAGS = -fvisibility=hidden
# the trace format, one directory both sides include (format.h, events.def
# and the headers the recorder and the converter must agree on)
FORMAT_INC = -Ilibfeedtrace/format
LIB_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(BUILD)/obj/gen/cuda_wrappers.o
CUDA_GEN = $(BUILD)/gen/cuda_wrappers.c

# The converter: one directory per layer (docs/ARCHITECTURE.md, "Layers";
# their order, lowest first, is tests/unit/test_layers.py's). Every .c of a
# directory is built, so a new file needs no line here; the compiler gets
# one -I per directory, so a file names a header by its name alone.
# converter/out/pftrace.c is built by converter/out/pftrace.mk (it needs the
# generated protobuf header).
CONV_DIRS = $(patsubst %/,%,$(sort $(wildcard converter/*/)))
CONV_INC  = $(addprefix -I,$(CONV_DIRS))
TOOL_SRCS = $(filter-out converter/out/pftrace.c,$(wildcard $(addsuffix /*.c,$(CONV_DIRS))))
# the converter's sources without its main(), and the flags they are
# compiled with: what scripts/fuzz.sh links with its harness (one list, here)
.PHONY: print-fuzz-srcs print-fuzz-cflags
print-fuzz-srcs:
	@echo $(filter-out converter/cmd/main.c,$(TOOL_SRCS))
print-fuzz-cflags:
	@echo $(FORMAT_INC) $(CONV_INC)
TOOL_OBJS   = $(patsubst %.c,$(BUILD)/obj/%.o,$(TOOL_SRCS))

# Each object's headers (and the .def tables they include) as the compiler
# saw them (-MMD), with an empty rule for each (-MP: a header removed is no
# error); the .d files are read back at the end of this Makefile.
DEPFLAGS = -MMD -MP

TEST_PROGS = $(patsubst tests/progs/%.c,$(BUILD)/tests/%,$(wildcard tests/progs/*.c))
# test programs built otherwise (rules below): libraries a test preloads
# beside feedtrace, a CUDA program linked to the simulated driver, a
# stand-in libnccl and its program
TEST_VARIANTS = $(BUILD)/tests/cuda_next_lib.so $(BUILD)/tests/life_early_lib.so \
                $(BUILD)/tests/cu_array_prog_linked $(BUILD)/tests/nccl/nccl_prog \
                $(BUILD)/tests/gloo/gloo_prog $(BUILD)/tests/slowread.so \
                $(BUILD)/tests/solo_next.so $(BUILD)/tests/pyskew/libfeedtrace.so \
                $(BUILD)/tests/uring_fake.so
# tests/vshapes/: the verdict's test shapes on the simulated driver (rule below)
VSHAPES = $(patsubst tests/vshapes/%.c,$(BUILD)/vshapes/%,$(wildcard tests/vshapes/*.c))

.PHONY: all deps demo test test-only bench install clean

include tests/simgpu/simgpu.mk
include converter/out/pftrace.mk

# the Python-side instrumentation, beside the library (libfeedtrace/pyinject.c)
PY_PART = $(BUILD)/feedtrace-python/sitecustomize.py

all: $(BUILD)/libfeedtrace.so $(BUILD)/feedtrace $(PY_PART)

$(BUILD)/feedtrace-python/%.py: libfeedtrace/python/%.py
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(FORMAT_INC) $(if $(filter libfeedtrace/% shim/%,$<),$(LIB_CFLAGS)) \
	    $(if $(filter converter/%,$<),$(CONV_INC)) -c $< -o $@

# CUDA wrappers: generated from one table (shim/cuda.tsv)
$(CUDA_GEN): shim/cuda.tsv scripts/gen_cuda.py scripts/ftdefs.py libfeedtrace/format/events.def
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/gen_cuda.py shim/cuda.tsv $(dir $@)

$(BUILD)/obj/gen/cuda_wrappers.o: $(CUDA_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(FORMAT_INC) $(LIB_CFLAGS) -Ishim -c $< -o $@

# With the toolkit present, every wrapper's parameters are checked against cuda.h.
$(BUILD)/gen/cuda_checked: $(CUDA_GEN)
ifneq ($(CUDA_CFLAGS),)
	$(CC) -std=gnu11 -fsyntax-only $(CUDA_CFLAGS) $(BUILD)/gen/cuda_check_default.c
	$(CC) -std=gnu11 -fsyntax-only $(CUDA_CFLAGS) $(BUILD)/gen/cuda_check_ptds.c
endif
	@touch $@

$(BUILD)/gen/pyframe_checked: libfeedtrace/pyframe.h libfeedtrace/pyframe_check.c
	@mkdir -p $(dir $@)
	@for inc in $(PY_INCS); do echo "pyframe.h checked against $$inc"; \
	  $(CC) -std=gnu11 -fsyntax-only -I$$inc libfeedtrace/pyframe_check.c || exit 1; done
	@for v in $(PY_VERSIONS); do case " $(PY_INCS) " in *"/python$$v "*) ;; \
	  *) echo "pyframe.h: no CPython $$v headers here: its offsets not checked";; esac; done
	@touch $@

# the versions of the exports that need one (shim/versions.map)
LIB_LDFLAGS = -Wl,--version-script=shim/versions.map

# -Bsymbolic-functions is NOT used: wrappers must interpose on calls made
# from inside the library too, and the library only calls real_* pointers.
$(BUILD)/libfeedtrace.so: $(LIB_OBJS) $(BUILD)/gen/cuda_checked $(BUILD)/gen/pyframe_checked shim/versions.map
	$(CC) -shared -o $@ $(LIB_OBJS) $(LDFLAGS) $(LIB_LDFLAGS) -Wl,-z,nodelete -lzstd -lunwind -ldl -lpthread

# the library with one offset of every Python layout wrong (the code
# object's first line, FT_PYWALK_SKEW): tests/traced/test_pyversions.py sees its
# site test fail with it
PYSKEW_OBJS = $(filter-out $(BUILD)/obj/libfeedtrace/pywalk.o,$(LIB_OBJS)) $(BUILD)/tests/pyskew/pywalk.o
$(BUILD)/tests/pyskew/pywalk.o: libfeedtrace/pywalk.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FORMAT_INC) $(LIB_CFLAGS) -DFT_PYWALK_SKEW=4 -c $< -o $@
$(BUILD)/tests/pyskew/libfeedtrace.so: $(PYSKEW_OBJS) shim/versions.map
	$(CC) -shared -o $@ $(PYSKEW_OBJS) $(LDFLAGS) $(LIB_LDFLAGS) -Wl,-z,nodelete -lzstd -lunwind -ldl -lpthread

TOOL_LIBS = -lzstd $(PFTRACE_LIBS) -ldw -lelf -liberty -ljson-c -lm
$(BUILD)/feedtrace: $(TOOL_OBJS) $(PFTRACE_OBJS)
	$(CC) -o $@ $^ $(LDFLAGS) $(TOOL_LIBS)

# tests/unit/an_*.c: C tests of the analyses on events made in memory
# (tests/unit/an.h), linked with the converter's objects but its main();
# tests/unit/test_analyses.py runs them
AN_TESTS = $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(wildcard tests/unit/an_*.c))
AN_OBJS = $(filter-out %/main.o,$(TOOL_OBJS)) $(PFTRACE_OBJS)
$(BUILD)/tests/unit/an_%: tests/unit/an_%.c tests/unit/an.c tests/unit/an.h $(AN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FORMAT_INC) $(CONV_INC) -Itests/unit -o $@ $< tests/unit/an.c $(AN_OBJS) $(LDFLAGS) $(TOOL_LIBS)

# tests/unit/fkind_table.c: the finding kinds' table as JSON, for
# tests/unit/test_fkind_table.py (built like the analyses' tests)
$(BUILD)/tests/unit/fkind_table: tests/unit/fkind_table.c $(AN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Werror $(FORMAT_INC) $(CONV_INC) -I$(BUILD)/gen -o $@ $< $(AN_OBJS) $(LDFLAGS) $(TOOL_LIBS)

$(BUILD)/tests/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -g -Wall -D_GNU_SOURCE $(SANFLAGS) -o $@ $< -lpthread

$(BUILD)/tests/%.so: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O2 -D_GNU_SOURCE -o $@ $<

$(BUILD)/tests/cu_array_prog_linked: tests/progs/cu_array_prog.c simgpu
	$(CC) -O2 -g -Wall -D_GNU_SOURCE -DLINKED -o $@ $< -L$(BUILD)/simgpu -lcuda \
		-Wl,-rpath,$(abspath $(BUILD)/simgpu) -ldl

$(BUILD)/tests/nccl/libnccl.so.2: tests/nccl/fake_nccl.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O2 -Wl,-soname,libnccl.so.2 -o $@ $<
	ln -sf libnccl.so.2 $(BUILD)/tests/nccl/libnccl.so

$(BUILD)/tests/nccl/nccl_prog: tests/nccl/nccl_prog.c $(BUILD)/tests/nccl/libnccl.so.2
	$(CC) -O2 -o $@ $< -L$(BUILD)/tests/nccl -lnccl -ldl -Wl,-rpath,$(abspath $(BUILD)/tests/nccl)

# stand-in libgloo, a process group linked to it, and their program
GLOO_T = $(BUILD)/tests/gloo
$(GLOO_T)/libgloo.so.0: tests/gloo/fake_gloo.c shim/gloo.def
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O2 -Wl,-soname,libgloo.so.0 -o $@ $<

$(GLOO_T)/libfakepg.so: tests/gloo/fake_pg.c shim/gloo.def $(GLOO_T)/libgloo.so.0
	$(CC) -shared -fPIC -O2 -o $@ $< $(GLOO_T)/libgloo.so.0 -Wl,-rpath,$(abspath $(GLOO_T))

$(GLOO_T)/gloo_prog: tests/gloo/gloo_prog.c $(GLOO_T)/libfakepg.so
	$(CC) -g -O2 -o $@ $< -ldl -pthread -Wl,-rpath,$(abspath $(GLOO_T))

$(BUILD)/tests/slowread.so: tests/slowread/slowread.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O2 -o $@ $< -ldl

deps:
	@scripts/deps.sh

# every test: the suite, then the suite again against an ASan+UBSan build
# (docs/RELIABILITY.md); the last line is pytest's summary of that run
test: deps
	@$(MAKE) --no-print-directory test-only
	@$(MAKE) --no-print-directory test-asan-ubsan

test-only: all $(TEST_PROGS) $(TEST_VARIANTS) simgpu $(BUILD)/tests/test_simgpu $(AN_TESTS) $(BUILD)/tests/unit/fkind_table $(PFTRACE_TEST) $(VSHAPES) examples
	$(PYTHON) -m pytest -q tests/unit tests/converter tests/traced

# one tier alone (tests/README.md): unit takes seconds (nothing traced, no
# browser); converter runs synthetic traces through the feedtrace command
.PHONY: test-unit test-converter
test-unit: all $(BUILD)/tests/test_simgpu $(AN_TESTS) $(BUILD)/tests/unit/fkind_table
	$(PYTHON) -m pytest -q tests/unit
test-converter: all $(PFTRACE_TEST)
	$(PYTHON) -m pytest -q tests/converter

demo: deps
	@$(MAKE) --no-print-directory all $(TEST_PROGS)
	@scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all $(TEST_PROGS) simgpu
	@scripts/bench.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/libfeedtrace.so $(DESTDIR)$(PREFIX)/lib/libfeedtrace.so
	install -m 0755 $(BUILD)/feedtrace $(DESTDIR)$(PREFIX)/bin/feedtrace
	install -d $(DESTDIR)$(PREFIX)/lib/feedtrace-python
	install -m 0644 $(PY_PART) $(DESTDIR)$(PREFIX)/lib/feedtrace-python/

clean:
	rm -rf $(BUILD)

# examples/: C programs on the CUDA driver API, linked against the simulated
# driver (build/simgpu, found through the rpath); FT_CUDA_PATH picks how they
# reach it at run time (examples/cudrv.h, examples/README.md).
EXAMPLES = $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
.PHONY: examples
examples: $(EXAMPLES)

$(BUILD)/examples/%: examples/%.c examples/cudrv.h examples/nvtx_stub.h $(SIMGPU_OUT)/libcuda.so.1
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -g -Wall -Wextra -D_GNU_SOURCE -DCUDRV_LINKED $(SANFLAGS) -o $@ $< \
	    -L$(SIMGPU_OUT) -lcuda -Wl,-rpath,'$$ORIGIN/../simgpu' -ldl -lpthread

# tests/vshapes/: programs with a planted limiting feed and their fixed twins
# (tests/traced/test_verdict_shapes.py), built as the examples are: -g -O2, linked
# against the simulated driver through the rpath.
.PHONY: vshapes
vshapes: $(VSHAPES)

$(BUILD)/vshapes/%: tests/vshapes/%.c tests/vshapes/vshape.h examples/cudrv.h $(SIMGPU_OUT)/libcuda.so.1
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -g -Wall -Wextra -D_GNU_SOURCE -DCUDRV_LINKED $(SANFLAGS) -o $@ $< \
	    -L$(SIMGPU_OUT) -lcuda -Wl,-rpath,'$$ORIGIN/../simgpu' -ldl -lpthread

# ---- faults (tests/traced/test_faults.py runs in `make test`; docs/RELIABILITY.md, "Faults")
#   make stress-faults   the long versions: 10 M reads, 200 kill -9, 100 000
#                        threads, 1000 forks, full disks and size limits
.PHONY: stress-faults
stress-faults: deps
	@$(MAKE) --no-print-directory all $(TEST_PROGS)
	$(PYTHON) -m pytest -q -s tests/stress/stress_faults.py

stress: stress-faults

# ---- sanitizers and fuzzing (docs/RELIABILITY.md, scripts/sanitize.sh, scripts/fuzz.sh)
#   make test-asan, test-ubsan, test-tsan   the whole suite against build/SAN
#   make test-asan-ubsan                    ASan and UBSan in one build (for CI)
#   make fuzz-short                         50 s of the reader/converter fuzzer
#   make stress-fuzz                        an hour of it (FUZZ_SECONDS=3600)
#   make stress                             every long test: add prerequisites
.PHONY: test-asan test-ubsan test-tsan test-asan-ubsan sanitize-progs fuzz-short \
        stress-fuzz stress
test-asan test-ubsan test-tsan test-asan-ubsan: deps
	@scripts/sanitize.sh $(@:test-%=%)

sanitize-progs: $(TEST_PROGS) simgpu $(BUILD)/tests/test_simgpu $(AN_TESTS) $(BUILD)/tests/unit/fkind_table $(PFTRACE_TEST)

FUZZ_SECONDS ?= 3600
fuzz-short: deps
	@scripts/fuzz.sh run 50
stress-fuzz: deps
	@scripts/fuzz.sh run $(FUZZ_SECONDS)

stress: stress-fuzz

# TSan: its runtime calls sigaction (feedtrace's wrapper) while it initialises,
# before instrumented code can run: the signal path is built uninstrumented.
ifneq ($(findstring -fsanitize=thread,$(SANFLAGS)),)
TSAN_PLAIN = $(BUILD)/obj/shim/process.o $(BUILD)/obj/shim/real.o $(BUILD)/obj/libfeedtrace/lifecycle.o
$(TSAN_PLAIN): CFLAGS := $(filter-out -fsanitize=thread,$(CFLAGS))
endif

-include $(patsubst %.o,%.d,$(LIB_OBJS) $(TOOL_OBJS))

# tests/gpucheck/: the real-GPU check program of scripts/gpu_check.sh (it
# reaches libcuda.so.1 by dlopen: built here, carried to a GPU machine)
$(BUILD)/gpucheck/gpu_spin: tests/gpucheck/gpu_spin.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -D_GNU_SOURCE -o $@ $< -ldl
.PHONY: gpucheck
gpucheck: $(BUILD)/gpucheck/gpu_spin
