// The process's floating-point mode: subnormal numbers are flushed to zero
// (MXCSR FTZ, bit 15) and read as zero (DAZ, bit 6). Set once, before the Go
// runtime starts, on the main thread; every thread created later (the Go
// runtime's, cgo's) inherits it. Plain ldmxcsr (not the VEX form): this
// runs on any x86-64, whatever the kernels' -march.
//
// OpenBLAS starts its worker threads in its own constructor, which runs
// first, so they would keep the default mode and compute their share of a
// product with subnormals; its pool is restarted here, from this thread.
// The symbols are weak: another BLAS links too, and is left alone.
#include <stdint.h>

extern int blas_thread_shutdown_(void) __attribute__((weak));
extern int blas_thread_init(void) __attribute__((weak));

static uint32_t get_mxcsr(void) {
	uint32_t csr;
	__asm__ __volatile__("stmxcsr %0" : "=m"(csr));
	return csr;
}

__attribute__((constructor)) static void gekc_flush_subnormals(void) {
	uint32_t csr = get_mxcsr() | 0x8040;
	__asm__ __volatile__("ldmxcsr %0" : : "m"(csr));
	if (blas_thread_shutdown_ && blas_thread_init) {
		blas_thread_shutdown_();
		blas_thread_init();
	}
}

