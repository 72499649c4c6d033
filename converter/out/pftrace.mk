# pftrace.mk - make fragment for the Perfetto writer (converter/out/).
# Builds the protobuf-c code from converter/out/perfetto.proto, the writer and
# its cmocka test. Included by the top-level Makefile (BUILD, CC, CFLAGS,
# CONV_INC).

# Keep whatever default goal the includer has (or will define next).
pftrace_saved_goal := $(.DEFAULT_GOAL)

PFTRACE_GEN    := $(BUILD)/gen
PFTRACE_OBJS   := $(BUILD)/obj/converter/out/pftrace.o $(BUILD)/obj/perfetto.pb-c.o
PFTRACE_CFLAGS := $(CONV_INC) -I$(PFTRACE_GEN)
PFTRACE_LIBS   := -lprotobuf-c
PFTRACE_TEST   := $(BUILD)/tests/test_pftrace
PFTRACE_PYTHON := $(or $(PYTHON),python3)

# protoc-c writes the .c and .h together: the .h rides on the .c's rule.
$(PFTRACE_GEN)/perfetto.pb-c.c: converter/out/perfetto.proto
	@mkdir -p $(PFTRACE_GEN)
	protoc-c --proto_path=converter/out --c_out=$(PFTRACE_GEN) converter/out/perfetto.proto

$(PFTRACE_GEN)/perfetto.pb-c.h: $(PFTRACE_GEN)/perfetto.pb-c.c ;

$(BUILD)/obj/perfetto.pb-c.o: $(PFTRACE_GEN)/perfetto.pb-c.c $(PFTRACE_GEN)/perfetto.pb-c.h
	@mkdir -p $(BUILD)/obj
	$(CC) $(CFLAGS) $(PFTRACE_CFLAGS) -c -o $@ $<

$(BUILD)/obj/converter/out/pftrace.o: converter/out/pftrace.c converter/out/pftrace.h converter/base/util.h $(PFTRACE_GEN)/perfetto.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PFTRACE_CFLAGS) -c -o $@ $<

# the writer maps the caller's track ids with converter/base/util.c's ft_map
$(PFTRACE_TEST): tests/converter/test_pftrace.c converter/out/pftrace.h $(PFTRACE_OBJS) $(BUILD)/obj/converter/base/util.o
	@mkdir -p $(BUILD)/tests
	$(CC) $(CFLAGS) $(PFTRACE_CFLAGS) -o $@ $< $(PFTRACE_OBJS) $(BUILD)/obj/converter/base/util.o \
		$(LDFLAGS) $(PFTRACE_LIBS) -lcmocka

# Runs the cmocka test, then checks the traces it wrote: structure with
# tests/check_pftrace.py, then loading in Perfetto's trace processor (14 =
# 13 slices + 1 instant); perfetto_load.sh exits 77, a skip, when it cannot
# get the trace processor (no node/npm).
.PHONY: test-pftrace
test-pftrace: $(PFTRACE_TEST)
	$(PFTRACE_TEST) $(BUILD)/tests/pftrace_test.pftrace $(BUILD)/tests/pftrace_reset.pftrace
	$(PFTRACE_PYTHON) tests/check_pftrace.py $(BUILD)/tests/pftrace_test.pftrace \
		--expect-slices 13 --expect-instants 1 --expect-counters 4 \
		--expect-flows 1 --expect-tracks 9
	$(PFTRACE_PYTHON) tests/check_pftrace.py $(BUILD)/tests/pftrace_reset.pftrace \
		--expect-slices 200 --min-resets 2
	$(PFTRACE_PYTHON) tests/check_pftrace.py --self-test
	tests/perfetto_load.sh $(BUILD)/tests/pftrace_test.pftrace --expect-slices 14 \
		|| [ $$? -eq 77 ]

.DEFAULT_GOAL := $(pftrace_saved_goal)
