// Compiled with -O3 -march=x86-64-v3 (AVX2 + FMA); the Go side only calls
// these when the CPU reports both features.
#pragma GCC optimize("no-math-errno")
#include "kernels_amd64.h"

#include <immintrin.h>
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
	const float step = lr / bias1, rsb2 = 1.0f / sqrtf(bias2);
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
	}
	return bad;
}
