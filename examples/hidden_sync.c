/*
 * hidden_sync: the CPU waits for the GPU although it never asked to.
 *
 * Broken (default), per step:
 *   - the batch (256 KiB) is prepared in pageable (malloc) memory and sent
 *     with cuMemcpyHtoDAsync: pageable, so the driver stages it and the call
 *     returns only when the copy is done (a hidden sync);
 *   - 3 kernels (forward 150 us, backward 300 us, optimizer 50 us);
 *   - the loss (4 bytes) is read back with cuMemcpyDtoH, as PyTorch's
 *     loss.item() does: the CPU waits for the whole step (a hidden sync),
 *     and the GPU idles while the CPU prepares the next batch (250 us).
 * Fixed (--fixed): the batch is prepared in page-locked memory
 * (cuMemHostAlloc, double-buffered, an event per buffer so a buffer is
 * refilled only once its copy is done), the copy is truly asynchronous, and
 * the loss is read back only every 10 steps, with cuMemcpyDtoHAsync into
 * page-locked memory + cuEventRecord + cuEventSynchronize.
 *
 * Both: 20 steps, then one cuStreamSynchronize. Exact numbers:
 * examples/README.md. Driver path: FT_CUDA_PATH (cudrv.h). Each step is an
 * NVTX range named "step" (nvtx_stub.h, a stand-in for the NVTX loader:
 * recorded when NVTX_INJECTION64_PATH names libfeedtrace.so, as
 * `feedtrace run` sets it), so `feedtrace diff` compares time per step.
 */
#include "cudrv.h"
#include "nvtx_stub.h"

#define STEPS 20
#define BATCH_BYTES (256 * 1024)
#define CPU_NS_PER_BATCH 250000      /* preparing a batch on the CPU */
#define LOG_EVERY 10                 /* fixed: loss read back every 10 steps */

static const char image[] =
	"kernel forward 150000\n"
	"kernel backward 300000\n"
	"kernel optimizer_step 50000\n";

static void prepare_batch(unsigned char *b, int step)
{
	cudrv_spin(CPU_NS_PER_BATCH);
	memset(b, step & 0xff, BATCH_BYTES);
}

int main(int argc, char **argv)
{
	int fixed = argc > 1 && strcmp(argv[1], "--fixed") == 0;
	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	CUfunction fwd = cudrv_kernel(lib, "forward");
	CUfunction bwd = cudrv_kernel(lib, "backward");
	CUfunction opt = cudrv_kernel(lib, "optimizer_step");

	CUdeviceptr d_batch, d_loss;
	CK(cu.MemAlloc(&d_batch, BATCH_BYTES));
	CK(cu.MemAlloc(&d_loss, sizeof(float)));
	void *args[] = { &d_batch, &d_loss };
	float loss = 0;

	uint64_t t0 = cudrv_now_ns();
	if (!fixed) {
		unsigned char *batch = malloc(BATCH_BYTES);          /* pageable */
		for (int step = 0; step < STEPS; step++) {
			nvtxRangePushA("step");
			prepare_batch(batch, step);
			CK(cu.MemcpyHtoDAsync(d_batch, batch, BATCH_BYTES, NULL));
			CK(cu.LaunchKernel(fwd, 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			CK(cu.LaunchKernel(bwd, 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			CK(cu.LaunchKernel(opt, 64, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			CK(cu.MemcpyDtoH(&loss, d_loss, sizeof loss));  /* loss.item() */
			nvtxRangePop();
		}
		free(batch);
	} else {
		unsigned char *batch[2];
		float *h_loss;
		CUevent copied[2], loss_ready;
		for (int i = 0; i < 2; i++) {
			CK(cu.MemHostAlloc((void **)&batch[i], BATCH_BYTES, 0));
			CK(cu.EventCreate(&copied[i], CU_EVENT_DISABLE_TIMING));
		}
		CK(cu.MemHostAlloc((void **)&h_loss, sizeof *h_loss, 0));
		CK(cu.EventCreate(&loss_ready, CU_EVENT_DISABLE_TIMING));
		for (int step = 0; step < STEPS; step++) {
			int b = step % 2;
			nvtxRangePushA("step");
			if (step >= 2)      /* buffer b's previous copy must be done */
				CK(cu.EventSynchronize(copied[b]));
			prepare_batch(batch[b], step);
			CK(cu.MemcpyHtoDAsync(d_batch, batch[b], BATCH_BYTES, NULL));
			CK(cu.EventRecord(copied[b], NULL));
			CK(cu.LaunchKernel(fwd, 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			CK(cu.LaunchKernel(bwd, 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			CK(cu.LaunchKernel(opt, 64, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			if ((step + 1) % LOG_EVERY == 0) {
				CK(cu.MemcpyDtoHAsync(h_loss, d_loss, sizeof *h_loss, NULL));
				CK(cu.EventRecord(loss_ready, NULL));
				CK(cu.EventSynchronize(loss_ready));
				loss = *h_loss;
			}
			nvtxRangePop();
		}
	}
	CK(cu.StreamSynchronize(NULL));
	uint64_t t1 = cudrv_now_ns();
	printf("hidden_sync%s [%s]: %d steps, loss read %s, batch in %s memory, %.1f ms (loss %g)\n",
	       fixed ? " --fixed" : "", cu.path, STEPS,
	       fixed ? "every 10 steps (async)" : "every step (cuMemcpyDtoH)",
	       fixed ? "page-locked" : "pageable", (double)(t1 - t0) / 1e6, loss);
	return 0;
}
