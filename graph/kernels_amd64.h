// Float32 hot loops of gekc, vectorised with AVX2/FMA intrinsics.
// Every function has a portable Go twin in kernels.go; tests compare them.
#include <stdint.h>

// out[i] = log(sum_j exp(x[i*ld+j])) for j < cols; NaN if a row holds a NaN.
void gekc_lse_rows_f32(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out);
// out[i] = log(sum_{j<cols-neg} exp(x[i*cols+j]) - sum_{j>=cols-neg} exp(x[i*cols+j])),
// with the non-finite cases of SignedRowLogSumExp (signedlse.go).
void gekc_signed_lse_rows_f32(const float *x, int64_t rows, int64_t cols, int64_t neg, float *out);
// out[i*ld+j] = g[i] * exp(x[i*ld+j] - lse[i]).
void gekc_softmax_scale_f32(const float *x, const float *lse, const float *g, int64_t rows,
                            int64_t cols, int64_t ld, float *out);
// out[i*cols+j] = exp(x[i*cols+j] - rowshift[i] - colshift[j]); either shift may be NULL.
void gekc_exp_shift_f32(const float *x, int64_t rows, int64_t cols, const float *rowshift,
                        const float *colshift, float *out);
// One Adam step over n parameters; returns the number of non-finite gradients seen.
int64_t gekc_adam_f32(float *p, const float *g, float *m, float *v, int64_t n, float lr,
                      float beta1, float beta2, float eps, float bias1, float bias2);
// One Adagrad step (sum += g², p -= lr·g/(√sum + eps)) and one SGD step
// (d = g + momentum·buf when buf is not NULL, buf = d; p -= lr·d) over n
// parameters; both return the number of non-finite gradients seen.
int64_t gekc_adagrad_f32(float *p, const float *g, float *sum, int64_t n, float lr, float eps);
int64_t gekc_sgd_f32(float *p, const float *g, float *buf, int64_t n, float lr, float momentum);
// Elementwise unary functions (kind as in elementwise.go's unaryKind) and
// their derivatives: out = f(x) and out = g · f'(x) given y = f(x).
void gekc_unary_f32(int kind, float c, const float *x, float *out, int64_t n);
void gekc_unary_grad_f32(int kind, float c, const float *g, const float *x, const float *y, float *out, int64_t n);
// acc[j] += sum_i exp(x[i*cols+j] - shift[j]) over rows [0,rows).
void gekc_col_sumexp_f32(const float *x, int64_t rows, int64_t cols, const float *shift, float *acc);
// The calling thread's MXCSR (fpmode_amd64.c).
uint32_t gekc_mxcsr(void);
