# tests/simgpu/simgpu.mk - make fragment for simgpu, the simulated libcuda.so.1
# (a test double) and its cmocka test. Included by the top-level Makefile, which
# provides BUILD, CC and CFLAGS. Targets: simgpu, $(BUILD)/tests/test_simgpu, test-simgpu.

SIMGPU_DIR  := tests/simgpu
SIMGPU_OUT  := $(BUILD)/simgpu
SIMGPU_SRCS := $(addprefix $(SIMGPU_DIR)/,sim_core.c sim_exec.c sim_mem.c sim_proc.c)
SIMGPU_GEN  := $(SIMGPU_OUT)/variants_gen.c
SIMGPU_TSV  := tests/data/cudart13-getprocaddress.tsv
SIMGPU_HDRS := $(SIMGPU_DIR)/simgpu.h $(SIMGPU_DIR)/sim_internal.h

.PHONY: simgpu test-simgpu
simgpu: $(SIMGPU_OUT)/libcuda.so.1

# the variant table drives the stubs and the cuGetProcAddress table
$(SIMGPU_GEN): $(SIMGPU_DIR)/gen_variants.awk $(SIMGPU_DIR)/variants.tsv $(SIMGPU_TSV)
	@mkdir -p $(@D)
	awk -F '\t' -f $(SIMGPU_DIR)/gen_variants.awk $(SIMGPU_DIR)/variants.tsv $(SIMGPU_TSV) > $@.tmp
	mv $@.tmp $@

$(SIMGPU_OUT)/libcuda.so.1: $(SIMGPU_SRCS) $(SIMGPU_GEN) $(SIMGPU_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -fvisibility=hidden -I$(SIMGPU_DIR) -shared \
	    -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -Wl,--no-undefined -o $@ $(SIMGPU_SRCS) $(SIMGPU_GEN) -lpthread
	ln -sf libcuda.so.1 $(SIMGPU_OUT)/libcuda.so

$(BUILD)/tests/test_simgpu: $(SIMGPU_DIR)/test_simgpu.c $(SIMGPU_OUT)/libcuda.so.1 $(SIMGPU_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -I$(SIMGPU_DIR) -o $@ $< $(SIMGPU_OUT)/libcuda.so.1 \
	    -Wl,-rpath,'$$ORIGIN/../simgpu' -lcmocka -ldl -lpthread

test-simgpu: $(BUILD)/tests/test_simgpu
	$(BUILD)/tests/test_simgpu $(SIMGPU_TSV)
