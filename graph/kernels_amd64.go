package graph

// #cgo CFLAGS: -O3 -march=x86-64-v3
// #cgo LDFLAGS: -lm
// #include "kernels_amd64.h"
import "C"

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveAVX2 gates the C kernels, which are compiled for x86-64-v3.
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func f32p(x []float32) *C.float {
	if len(x) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&x[0]))
}

func lseRowsF32(x []float32, rows, cols, ld int, out []float32) bool {
	if !haveAVX2 {
		return false
	}
	C.gekc_lse_rows_f32(f32p(x), C.int64_t(rows), C.int64_t(cols), C.int64_t(ld), f32p(out))
	return true
}

func signedLSERowsF32(x []float32, rows, cols, neg int, out []float32) bool {
	if !haveAVX2 {
		return false
	}
	C.gekc_signed_lse_rows_f32(f32p(x), C.int64_t(rows), C.int64_t(cols), C.int64_t(neg), f32p(out))
	return true
}

func softmaxScaleF32(x, lse, g []float32, rows, cols, ld int, out []float32) bool {
	if !haveAVX2 {
		return false
	}
	C.gekc_softmax_scale_f32(f32p(x), f32p(lse), f32p(g), C.int64_t(rows), C.int64_t(cols), C.int64_t(ld), f32p(out))
	return true
}

func expShiftF32(x []float32, rows, cols int, rowShift, colShift []float32, out []float32) bool {
	if !haveAVX2 {
		return false
	}
	C.gekc_exp_shift_f32(f32p(x), C.int64_t(rows), C.int64_t(cols), f32p(rowShift), f32p(colShift), f32p(out))
	return true
}

func adamF32(p, g, m, v []float32, lr, beta1, beta2, eps, bias1, bias2 float32) (nonFinite int, ok bool) {
	if !haveAVX2 {
		return 0, false
	}
	n := C.gekc_adam_f32(f32p(p), f32p(g), f32p(m), f32p(v), C.int64_t(len(p)), C.float(lr),
		C.float(beta1), C.float(beta2), C.float(eps), C.float(bias1), C.float(bias2))
	return int(n), true
}

func adagradF32(p, g, sum []float32, lr, eps float32) (nonFinite int, ok bool) {
	if !haveAVX2 {
		return 0, false
	}
	return int(C.gekc_adagrad_f32(f32p(p), f32p(g), f32p(sum), C.int64_t(len(p)), C.float(lr), C.float(eps))), true
}

// sgdF32 takes buf nil for SGD without momentum.
func sgdF32(p, g, buf []float32, lr, momentum float32) (nonFinite int, ok bool) {
	if !haveAVX2 {
		return 0, false
	}
	return int(C.gekc_sgd_f32(f32p(p), f32p(g), f32p(buf), C.int64_t(len(p)), C.float(lr), C.float(momentum))), true
}

func unaryF32(kind unaryKind, c float32, x, out []float32) bool {
	if !haveAVX2 || kind == kindScale || kind == kindShift {
		return false
	}
	C.gekc_unary_f32(C.int(kind), C.float(c), f32p(x), f32p(out), C.int64_t(len(x)))
	return true
}

func unaryGradF32(kind unaryKind, c float32, g, x, y, out []float32) bool {
	if !haveAVX2 || kind == kindScale || kind == kindShift {
		return false
	}
	C.gekc_unary_grad_f32(C.int(kind), C.float(c), f32p(g), f32p(x), f32p(y), f32p(out), C.int64_t(len(x)))
	return true
}

func colSumExpF32(x []float32, rows, cols int, shift, acc []float32) bool {
	if !haveAVX2 {
		return false
	}
	C.gekc_col_sumexp_f32(f32p(x), C.int64_t(rows), C.int64_t(cols), f32p(shift), f32p(acc))
	return true
}

func subnormalsFlushed() bool { return C.gekc_mxcsr()&0x8040 == 0x8040 }
