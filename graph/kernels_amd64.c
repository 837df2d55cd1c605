// Compiled with -O3 -march=x86-64-v3 (AVX2 + FMA); the Go side only calls
// these when the CPU reports both features.
#pragma GCC optimize("no-math-errno")
#include "kernels_amd64.h"

#include <immintrin.h>
#include <float.h>
#include <math.h>

// exp for 8 floats: Cephes' polynomial after range reduction by ln 2,
// accurate to ~1 ulp; inputs below -87 give exactly 0 (no denormals),
// inputs above 88 saturate.
static inline __m256 exp8(__m256 x) {
	const __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
	x = _mm256_min_ps(x, _mm256_set1_ps(88.0f));
	x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
	__m256 fx = _mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f));
	fx = _mm256_round_ps(fx, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
	x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
	const __m256 z = _mm256_mul_ps(x, x);
	__m256 y = _mm256_set1_ps(1.9875691500e-4f);
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
	y = _mm256_fmadd_ps(y, z, x);
	y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
	__m256i n = _mm256_cvtps_epi32(fx);
	n = _mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23);
	y = _mm256_mul_ps(y, _mm256_castsi256_ps(n));
	return _mm256_andnot_ps(under, y);
}

static inline float hsum8(__m256 v) {
	__m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
	lo = _mm_add_ps(lo, hi);
	lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
	lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
	return _mm_cvtss_f32(lo);
}

static inline float hmax8(__m256 v) {
	__m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
	lo = _mm_max_ps(lo, hi);
	lo = _mm_max_ps(lo, _mm_movehl_ps(lo, lo));
	lo = _mm_max_ss(lo, _mm_movehdup_ps(lo));
	return _mm_cvtss_f32(lo);
}

// exp1 evaluates exp8 on one lane so tails match the vector body bit for bit.
static inline float exp1(float x) {
	return _mm256_cvtss_f32(exp8(_mm256_set1_ps(x)));
}

void gekc_lse_rows_f32(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out) {
	for (int64_t i = 0; i < rows; i++) {
		const float *r = x + i * ld;
		__m256 mx = _mm256_set1_ps(-INFINITY), nan = _mm256_setzero_ps();
		int64_t j = 0;
		for (; j + 8 <= cols; j += 8) {
			__m256 v = _mm256_loadu_ps(r + j);
			nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
			mx = _mm256_max_ps(mx, v);
		}
		float m = hmax8(mx);
		int bad = _mm256_movemask_ps(nan) != 0;
		for (; j < cols; j++) {
			if (r[j] != r[j]) bad = 1;
			if (r[j] > m) m = r[j];
		}
		if (bad) {
			out[i] = NAN;
			continue;
		}
		if (isinf(m)) {  // +Inf dominates; -Inf means the row is empty of mass
			out[i] = m;
			continue;
		}
		const __m256 vm = _mm256_set1_ps(m);
		__m256 s = _mm256_setzero_ps();
		j = 0;
		for (; j + 8 <= cols; j += 8) s = _mm256_add_ps(s, exp8(_mm256_sub_ps(_mm256_loadu_ps(r + j), vm)));
		float t = hsum8(s);
		for (; j < cols; j++) t += exp1(r[j] - m);
		out[i] = m + logf(t);
	}
}

void gekc_signed_lse_rows_f32(const float *x, int64_t rows, int64_t cols, int64_t neg, float *out) {
	const int64_t pos = cols - neg;
	for (int64_t i = 0; i < rows; i++) {
		const float *r = x + i * cols;
		__m256 mxp = _mm256_set1_ps(-INFINITY), mxn = mxp, nan = _mm256_setzero_ps();
		int64_t j = 0;
		for (; j + 8 <= pos; j += 8) {
			__m256 v = _mm256_loadu_ps(r + j);
			nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
			mxp = _mm256_max_ps(mxp, v);
		}
		float mp = hmax8(mxp);
		int bad = 0;
		for (; j < pos; j++) {
			if (r[j] != r[j]) bad = 1;
			if (r[j] > mp) mp = r[j];
		}
		for (; j + 8 <= cols; j += 8) {
			__m256 v = _mm256_loadu_ps(r + j);
			nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
			mxn = _mm256_max_ps(mxn, v);
		}
		float mn = hmax8(mxn);
		for (; j < cols; j++) {
			if (r[j] != r[j]) bad = 1;
			if (r[j] > mn) mn = r[j];
		}
		bad |= _mm256_movemask_ps(nan) != 0;
		// The cases where the composite p + log1mexp(n - p) is not finite.
		if (bad || mn == INFINITY) {
			out[i] = NAN;
			continue;
		}
		if (mp == INFINITY) {
			out[i] = INFINITY;
			continue;
		}
		const float m = mp > mn ? mp : mn;
		if (m == -INFINITY) {
			out[i] = NAN;
			continue;
		}
		const __m256 vm = _mm256_set1_ps(m);
		__m256 sp = _mm256_setzero_ps(), sn = _mm256_setzero_ps();
		j = 0;
		for (; j + 8 <= pos; j += 8) sp = _mm256_add_ps(sp, exp8(_mm256_sub_ps(_mm256_loadu_ps(r + j), vm)));
		float tp = hsum8(sp);
		for (; j < pos; j++) tp += exp1(r[j] - m);
		for (; j + 8 <= cols; j += 8) sn = _mm256_add_ps(sn, exp8(_mm256_sub_ps(_mm256_loadu_ps(r + j), vm)));
		float tn = hsum8(sn);
		for (; j < cols; j++) tn += exp1(r[j] - m);
		out[i] = m + logf(tp - tn);  // -Inf for tp == tn, NaN for tp < tn
	}
}

void gekc_softmax_scale_f32(const float *x, const float *lse, const float *g, int64_t rows,
                            int64_t cols, int64_t ld, float *out) {
	for (int64_t i = 0; i < rows; i++) {
		const float *r = x + i * ld;
		float *o = out + i * ld;
		const __m256 vl = _mm256_set1_ps(lse[i]), vg = _mm256_set1_ps(g[i]);
		int64_t j = 0;
		for (; j + 8 <= cols; j += 8)
			_mm256_storeu_ps(o + j, _mm256_mul_ps(vg, exp8(_mm256_sub_ps(_mm256_loadu_ps(r + j), vl))));
		for (; j < cols; j++) o[j] = g[i] * exp1(r[j] - lse[i]);
	}
}

void gekc_exp_shift_f32(const float *x, int64_t rows, int64_t cols, const float *rowshift,
                        const float *colshift, float *out) {
	for (int64_t i = 0; i < rows; i++) {
		const float *r = x + i * cols;
		float *o = out + i * cols;
		const float rs = rowshift ? rowshift[i] : 0.0f;
		const __m256 vr = _mm256_set1_ps(rs);
		int64_t j = 0;
		if (colshift) {
			for (; j + 8 <= cols; j += 8) {
				__m256 v = _mm256_sub_ps(_mm256_loadu_ps(r + j), vr);
				v = _mm256_sub_ps(v, _mm256_loadu_ps(colshift + j));
				_mm256_storeu_ps(o + j, exp8(v));
			}
			for (; j < cols; j++) o[j] = exp1(r[j] - rs - colshift[j]);
		} else {
			for (; j + 8 <= cols; j += 8)
				_mm256_storeu_ps(o + j, exp8(_mm256_sub_ps(_mm256_loadu_ps(r + j), vr)));
			for (; j < cols; j++) o[j] = exp1(r[j] - rs);
		}
	}
}

int64_t gekc_adam_f32(float *p, const float *g, float *m, float *v, int64_t n, float lr,
                      float beta1, float beta2, float eps, float bias1, float bias2) {
	// PyTorch's Adam: p -= lr/bias1 * m / (sqrt(v)/sqrt(bias2) + eps).
	// p, m and v below FLT_MIN are flushed to zero (see adamStep).
	const float step = lr / bias1, rsb2 = 1.0f / sqrtf(bias2);
	const __m256 vmin = _mm256_set1_ps(FLT_MIN);
	const __m256 vb1 = _mm256_set1_ps(beta1), vc1 = _mm256_set1_ps(1.0f - beta1);
	const __m256 vb2 = _mm256_set1_ps(beta2), vc2 = _mm256_set1_ps(1.0f - beta2);
	const __m256 vstep = _mm256_set1_ps(step), vrs = _mm256_set1_ps(rsb2), veps = _mm256_set1_ps(eps);
	const __m256 vinf = _mm256_set1_ps(INFINITY), sign = _mm256_set1_ps(-0.0f);
	int64_t bad = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 gi = _mm256_loadu_ps(g + i);
		// |g| < Inf is false for NaN and ±Inf.
		__m256 fin = _mm256_cmp_ps(_mm256_andnot_ps(sign, gi), vinf, _CMP_LT_OQ);
		bad += 8 - __builtin_popcount(_mm256_movemask_ps(fin));
		__m256 mi = _mm256_fmadd_ps(vb1, _mm256_loadu_ps(m + i), _mm256_mul_ps(vc1, gi));
		__m256 vi = _mm256_fmadd_ps(vb2, _mm256_loadu_ps(v + i), _mm256_mul_ps(vc2, _mm256_mul_ps(gi, gi)));
		__m256 den = _mm256_fmadd_ps(_mm256_sqrt_ps(vi), vrs, veps);
		__m256 pi = _mm256_fnmadd_ps(vstep, _mm256_div_ps(mi, den), _mm256_loadu_ps(p + i));
		// |x| < FLT_MIN is false for NaN, which is kept.
		mi = _mm256_andnot_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, mi), vmin, _CMP_LT_OQ), mi);
		vi = _mm256_andnot_ps(_mm256_cmp_ps(vi, vmin, _CMP_LT_OQ), vi);
		pi = _mm256_andnot_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, pi), vmin, _CMP_LT_OQ), pi);
		_mm256_storeu_ps(m + i, mi);
		_mm256_storeu_ps(v + i, vi);
		_mm256_storeu_ps(p + i, pi);
	}
	for (; i < n; i++) {
		float gi = g[i];
		if (!isfinite(gi)) bad++;
		m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
		v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
		p[i] -= step * m[i] / (sqrtf(v[i]) * rsb2 + eps);
		if (fabsf(m[i]) < FLT_MIN) m[i] = 0;
		if (v[i] < FLT_MIN) v[i] = 0;
		if (fabsf(p[i]) < FLT_MIN) p[i] = 0;
	}
	return bad;
}

// |x| < FLT_MIN is false for NaN, which is kept (see adamStep).
static inline __m256 flush8(__m256 x) {
	const __m256 sign = _mm256_set1_ps(-0.0f), vmin = _mm256_set1_ps(FLT_MIN);
	return _mm256_andnot_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, x), vmin, _CMP_LT_OQ), x);
}

// nonfinite8 counts the lanes of g that are NaN or ±Inf.
static inline int nonfinite8(__m256 g) {
	const __m256 sign = _mm256_set1_ps(-0.0f), vinf = _mm256_set1_ps(INFINITY);
	return 8 - __builtin_popcount(_mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, g), vinf, _CMP_LT_OQ)));
}

static inline float flush1(float x) { return fabsf(x) < FLT_MIN ? 0 : x; }

int64_t gekc_adagrad_f32(float *p, const float *g, float *sum, int64_t n, float lr, float eps) {
	const __m256 vlr = _mm256_set1_ps(lr), veps = _mm256_set1_ps(eps);
	int64_t bad = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 gi = _mm256_loadu_ps(g + i);
		bad += nonfinite8(gi);
		__m256 si = _mm256_fmadd_ps(gi, gi, _mm256_loadu_ps(sum + i));
		__m256 den = _mm256_add_ps(_mm256_sqrt_ps(si), veps);
		__m256 pi = _mm256_fnmadd_ps(vlr, _mm256_div_ps(gi, den), _mm256_loadu_ps(p + i));
		_mm256_storeu_ps(sum + i, flush8(si));
		_mm256_storeu_ps(p + i, flush8(pi));
	}
	for (; i < n; i++) {
		float gi = g[i];
		if (!isfinite(gi)) bad++;
		float si = sum[i] + gi * gi;
		p[i] = flush1(p[i] - lr * gi / (sqrtf(si) + eps));
		sum[i] = flush1(si);
	}
	return bad;
}

int64_t gekc_sgd_f32(float *p, const float *g, float *buf, int64_t n, float lr, float momentum) {
	const __m256 vlr = _mm256_set1_ps(lr), vmom = _mm256_set1_ps(momentum);
	int64_t bad = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 d = _mm256_loadu_ps(g + i);
		bad += nonfinite8(d);
		if (buf) {
			d = _mm256_fmadd_ps(vmom, _mm256_loadu_ps(buf + i), d);
			_mm256_storeu_ps(buf + i, flush8(d));
		}
		_mm256_storeu_ps(p + i, flush8(_mm256_fnmadd_ps(vlr, d, _mm256_loadu_ps(p + i))));
	}
	for (; i < n; i++) {
		float d = g[i];
		if (!isfinite(d)) bad++;
		if (buf) {
			d += momentum * buf[i];
			buf[i] = flush1(d);
		}
		p[i] = flush1(p[i] - lr * d);
	}
	return bad;
}

// log for 8 positive floats (Cephes logf): x = m·2^e with m in [√½, √2).
static inline __m256 log8(__m256 x) {
	const __m256 one = _mm256_set1_ps(1.0f);
	const __m256 invalid = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
	const __m256 zero = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ);
	const __m256 pinf = _mm256_cmp_ps(x, _mm256_set1_ps(INFINITY), _CMP_EQ_OQ);
	x = _mm256_max_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00800000)));  // no denormals
	__m256i xi = _mm256_castps_si256(x);
	__m256i e = _mm256_sub_epi32(_mm256_srli_epi32(xi, 23), _mm256_set1_epi32(127));
	xi = _mm256_and_si256(xi, _mm256_set1_epi32(0x007fffff));
	xi = _mm256_or_si256(xi, _mm256_castps_si256(_mm256_set1_ps(0.5f)));
	__m256 m = _mm256_castsi256_ps(xi);  // in [0.5, 1)
	__m256 ef = _mm256_add_ps(_mm256_cvtepi32_ps(e), one);
	const __m256 small = _mm256_cmp_ps(m, _mm256_set1_ps(0.707106781186547524f), _CMP_LT_OQ);
	__m256 tmp = _mm256_and_ps(m, small);
	ef = _mm256_sub_ps(ef, _mm256_and_ps(one, small));
	m = _mm256_add_ps(_mm256_sub_ps(m, one), tmp);
	const __m256 z = _mm256_mul_ps(m, m);
	__m256 y = _mm256_set1_ps(7.0376836292e-2f);
	y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(-1.1514610310e-1f));
	y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(1.1676998740e-1f));
	y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(-1.2420140846e-1f));
	y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(1.4249322787e-1f));
	y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(-1.6668057665e-1f));
	y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(2.0000714765e-1f));
	y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(-2.4999993993e-1f));
	y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(3.3333331174e-1f));
	y = _mm256_mul_ps(_mm256_mul_ps(y, m), z);
	y = _mm256_fmadd_ps(ef, _mm256_set1_ps(-2.12194440e-4f), y);
	y = _mm256_fnmadd_ps(z, _mm256_set1_ps(0.5f), y);
	y = _mm256_add_ps(_mm256_add_ps(m, y), _mm256_mul_ps(ef, _mm256_set1_ps(0.693359375f)));
	y = _mm256_blendv_ps(y, _mm256_set1_ps(NAN), invalid);
	y = _mm256_blendv_ps(y, _mm256_set1_ps(-INFINITY), zero);
	return _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), pinf);
}

// expm1 for |x| ≤ ln 2 by its Taylor series to x¹⁰ (relative error ~1e-8),
// where exp(x) − 1 would cancel.
static inline __m256 expm1_small8(__m256 x) {
	__m256 y = _mm256_set1_ps(1.0f / 3628800.0f);
	const float inv[] = {1.0f / 362880.0f, 1.0f / 40320.0f, 1.0f / 5040.0f, 1.0f / 720.0f,
	                     1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f};
	for (int i = 0; i < 9; i++) y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(inv[i]));
	return _mm256_mul_ps(y, x);
}

// Kinds follow unaryKind in elementwise.go.
enum { K_SCALE, K_EXP, K_LOGPOS, K_LOGSQUARE, K_LOGSIGMOID, K_LOG1MEXP };

static inline __m256 unary8(int kind, __m256 c, __m256 x) {
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
	switch (kind) {
	case K_EXP:
		return exp8(x);
	case K_LOGPOS:
		return log8(_mm256_add_ps(_mm256_max_ps(x, zero), c));
	case K_LOGSQUARE:
		return log8(_mm256_fmadd_ps(x, x, c));
	case K_LOGSIGMOID: {  // min(x,0) − log(1 + exp(−|x|))
		__m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
		return _mm256_sub_ps(_mm256_min_ps(x, zero), log8(_mm256_add_ps(one, exp8(_mm256_sub_ps(zero, ax)))));
	}
	case K_LOG1MEXP: {  // log(1 − exp(x)) for x ≤ 0; −expm1(x) near 0
		__m256 near = _mm256_cmp_ps(x, _mm256_set1_ps(-0.693147180559945f), _CMP_GT_OQ);
		__m256 a = _mm256_sub_ps(zero, expm1_small8(x));
		__m256 b = _mm256_sub_ps(one, exp8(x));
		return log8(_mm256_blendv_ps(b, a, near));
	}
	}
	return _mm256_mul_ps(c, x);
}

static inline __m256 deriv8(int kind, __m256 c, __m256 x, __m256 y) {
	const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
	switch (kind) {
	case K_EXP:
		return y;
	case K_LOGPOS: {
		__m256 d = _mm256_div_ps(one, _mm256_add_ps(x, c));
		return _mm256_and_ps(d, _mm256_cmp_ps(x, zero, _CMP_GT_OQ));
	}
	case K_LOGSQUARE:
		return _mm256_div_ps(_mm256_add_ps(x, x), _mm256_fmadd_ps(x, x, c));
	case K_LOGSIGMOID:  // σ(−x) = 1/(1+exp(x))
		return _mm256_div_ps(one, _mm256_add_ps(one, exp8(x)));
	case K_LOG1MEXP: {  // −exp(x)/(1−exp(x)) = −1/expm1(−x)
		__m256 near = _mm256_cmp_ps(x, _mm256_set1_ps(-0.693147180559945f), _CMP_GT_OQ);
		__m256 den = _mm256_blendv_ps(_mm256_sub_ps(exp8(_mm256_sub_ps(zero, x)), one),
		                              expm1_small8(_mm256_sub_ps(zero, x)), near);
		return _mm256_div_ps(_mm256_set1_ps(-1.0f), den);
	}
	}
	return c;
}

void gekc_unary_f32(int kind, float c, const float *x, float *out, int64_t n) {
	const __m256 vc = _mm256_set1_ps(c);
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, unary8(kind, vc, _mm256_loadu_ps(x + i)));
	if (i < n) {
		float bx[8] = {0}, bo[8];
		for (int64_t j = i; j < n; j++) bx[j - i] = x[j];
		_mm256_storeu_ps(bo, unary8(kind, vc, _mm256_loadu_ps(bx)));
		for (int64_t j = i; j < n; j++) out[j] = bo[j - i];
	}
}

void gekc_unary_grad_f32(int kind, float c, const float *g, const float *x, const float *y, float *out, int64_t n) {
	const __m256 vc = _mm256_set1_ps(c);
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 d = deriv8(kind, vc, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i));
		_mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(g + i), d));
	}
	if (i < n) {
		float bg[8] = {0}, bx[8] = {0}, by[8] = {0}, bo[8];
		for (int64_t j = i; j < n; j++) bg[j - i] = g[j], bx[j - i] = x[j], by[j - i] = y[j];
		__m256 d = deriv8(kind, vc, _mm256_loadu_ps(bx), _mm256_loadu_ps(by));
		_mm256_storeu_ps(bo, _mm256_mul_ps(_mm256_loadu_ps(bg), d));
		for (int64_t j = i; j < n; j++) out[j] = bo[j - i];
	}
}

void gekc_col_sumexp_f32(const float *x, int64_t rows, int64_t cols, const float *shift, float *acc) {
	for (int64_t i = 0; i < rows; i++) {
		const float *r = x + i * cols;
		int64_t j = 0;
		for (; j + 8 <= cols; j += 8) {
			__m256 v = exp8(_mm256_sub_ps(_mm256_loadu_ps(r + j), _mm256_loadu_ps(shift + j)));
			_mm256_storeu_ps(acc + j, _mm256_add_ps(_mm256_loadu_ps(acc + j), v));
		}
		for (; j < cols; j++) acc[j] += exp1(r[j] - shift[j]);
	}
}

// gekc_mxcsr returns the calling thread's MXCSR, for SubnormalsFlushed.
uint32_t gekc_mxcsr(void) {
	uint32_t csr;
	__asm__ __volatile__("stmxcsr %0" : "=m"(csr));
	return csr;
}
