// tilefit's verification kernels (issue 17), compiled once per process with
// NVRTC (no headers): they draw counter-based inputs, compare outputs,
// hash their rows and scan them for special values where they are, so that
// only indices, hashes and a few elements cross to the host.
//
// tf_draw is kernel.Drawn (kernel/draw.go) line for line: the same 64-bit
// integer arithmetic, the same float32 steps (exact) and the same
// round-to-nearest-even conversion to fp16, so a device draws the host's
// bits. tf_rowhash is FNV-1a 64 (hash/fnv's New64a), verify.HashRows.
// Every parameter is 64 bits wide (pointers, unsigned long long, long
// long), so the host lays out one word per parameter. No header and no
// intrinsic: bit casts are unions, atomics are PTX red instructions (the
// host-C++ test, TF_HOST, gives plain versions).

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

// DType codes (kernel.DType): 1 f16, 2 bf16, 3 f32, 4 i8.

__device__ __forceinline__ float tf_as_float(u32 u)
{
	union {
		u32 u;
		float f;
	} x;
	x.u = u;
	return x.f;
}

__device__ __forceinline__ u32 tf_as_uint(float f)
{
	union {
		float f;
		u32 u;
	} x;
	x.f = f;
	return x.u;
}

#ifdef TF_HOST
static inline void tf_red_min(u64 *p, u64 v)
{
	if (v < *p)
		*p = v;
}
static inline void tf_red_add(u64 *p, u64 v) { *p += v; }
#else
__device__ __forceinline__ void tf_red_min(u64 *p, u64 v) { asm volatile("red.min.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void tf_red_add(u64 *p, u64 v) { asm volatile("red.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
#endif

__device__ __forceinline__ u64 tf_mix64(u64 z)
{
	z ^= z >> 30;
	z *= 0xbf58476d1ce4e5b9ULL;
	z ^= z >> 27;
	z *= 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

__device__ __forceinline__ u64 tf_word(u64 key, u64 e, u64 t)
{
	return tf_mix64(key + (4ULL * e + t + 1ULL) * 0x9e3779b97f4a7c15ULL);
}

// tf_f32_to_f16 is kernel.F32ToF16.
__device__ u32 tf_f32_to_f16(u32 b)
{
	u32 sign = (b >> 16) & 0x8000u;
	u32 a = b & 0x7fffffffu;
	if (a > 0x7f800000u)
		return sign | 0x7e00u;
	if (a >= 0x47800000u)
		return sign | 0x7c00u;
	if (a >= 0x38800000u) {
		u32 h = (a - 0x38000000u) >> 13;
		u32 rem = a & 0x1fffu;
		if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) == 1u))
			h++;
		return sign | h;
	}
	if (a < 0x33000000u)
		return sign;
	u32 m = (a & 0x7fffffu) | 0x800000u;
	u32 shift = 126u - (a >> 23);
	u32 r = m >> shift;
	u32 rem = m & ((1u << shift) - 1u);
	u32 half = 1u << (shift - 1u);
	if (rem > half || (rem == half && (r & 1u) == 1u))
		r++;
	return sign | r;
}

__device__ __forceinline__ float tf_pow2f(long long e) { return tf_as_float((u32)(e + 127) << 23); }

// tf_f32_bits is kernel.f32Bits.
__device__ u32 tf_f32_bits(long long dt, float v)
{
	u32 b = tf_as_uint(v);
	switch (dt) {
	case 3:
		return b;
	case 1:
		return tf_f32_to_f16(b);
	case 2:
		b += 0x7fffu + ((b >> 16) & 1u);
		return b >> 16;
	case 4:
		return (u32)(u8)(signed char)(int)v;
	}
	return 0;
}

__device__ __forceinline__ u32 tf_nonsign(long long dt)
{
	return dt == 3 ? 0x7fffffffu : (dt == 1 || dt == 2) ? 0x7fffu : 0xffu;
}

// tf_draw_bits is kernel.drawBits: kind 0 uniform, 1 int, 2 pow2.
__device__ u32 tf_draw_bits(long long kind, long long dt, u64 key, u64 e, long long maxv, long long lo, long long hi, long long positive)
{
	if (kind == 1 || kind == 2) {
		u64 w = tf_word(key, e, 0);
		float mag;
		if (kind == 1) {
			u64 mx = maxv > 1 ? (u64)maxv : 1ULL;
			mag = (float)(1ULL + (w >> 32) % mx) * tf_pow2f(lo);
		} else {
			long long span = hi - lo + 1;
			u64 sp = span > 1 ? (u64)span : 1ULL;
			mag = tf_pow2f(lo + (long long)((w >> 32) % sp));
		}
		if (!positive && (w & 1ULL) == 1ULL)
			mag = -mag;
		return tf_f32_bits(dt, mag);
	}
	for (u64 t = 0; t < 4; t++) {
		u64 w = tf_word(key, e, t);
		if (dt == 4) {
			int v = (int)(w % 254ULL) - 127;
			if (v >= 0)
				v++;
			return (u32)(u8)(signed char)v;
		}
		float v = (float)((int)(w >> 40) - (1 << 23)) * 0x1p-23f;
		u32 b = tf_f32_bits(dt, v);
		if ((b & tf_nonsign(dt)) != 0u)
			return b;
	}
	return tf_f32_bits(dt, 0x1p-10f);
}

extern "C" __global__ void tf_draw(u8 *out, u64 n, long long dt, long long kind, u64 key, long long maxv, long long lo, long long hi,
				   long long positive)
{
	u64 stride = (u64)gridDim.x * blockDim.x;
	for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
		u32 v = tf_draw_bits(kind, dt, key, e, maxv, lo, hi, positive);
		if (dt == 3)
			((u32 *)out)[e] = v;
		else if (dt == 1 || dt == 2)
			((u16 *)out)[e] = (u16)v;
		else
			out[e] = (u8)v;
	}
}

// tf_diff: *first = min(*first, the first element index ≥ from where a and
// b differ); elements of es bytes. *first starts at ~0 (none).
extern "C" __global__ void tf_diff(const u8 *a, const u8 *b, u64 n, long long es, u64 from, u64 *first)
{
	u64 stride = (u64)gridDim.x * blockDim.x;
	for (u64 e = from + (u64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
		bool d;
		if (es == 4)
			d = ((const u32 *)a)[e] != ((const u32 *)b)[e];
		else if (es == 2)
			d = ((const u16 *)a)[e] != ((const u16 *)b)[e];
		else
			d = a[e] != b[e];
		if (d) {
			tf_red_min(first, e);
			return; // this thread's later elements come after e
		}
	}
}

// tf_rowhash: out[r] = FNV-1a 64 of bytes [r·rowBytes, (r+1)·rowBytes) of p,
// one thread per row; rows of a multiple of 8 bytes are read 8 at a time
// (cuMemAlloc's 256-byte alignment keeps every such row aligned).
extern "C" __global__ void tf_rowhash(const u8 *p, u64 rows, u64 rowBytes, u64 *out)
{
	u64 r = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const u8 *q = p + r * rowBytes;
	u64 h = 0xcbf29ce484222325ULL;
	if ((rowBytes & 7ULL) == 0ULL) {
		const u64 *v = (const u64 *)q;
		for (u64 i = 0; i < rowBytes / 8; i++) {
			u64 w = v[i];
			for (int k = 0; k < 8; k++) {
				h ^= (w >> (8 * k)) & 0xffULL;
				h *= 0x100000001b3ULL;
			}
		}
	} else {
		for (u64 i = 0; i < rowBytes; i++) {
			h ^= (u64)q[i];
			h *= 0x100000001b3ULL;
		}
	}
	out[r] = h;
}

// tf_specials scans n elements of type dt (f32, f16, bf16) for all-ones
// exponents: res[0] counts the poison pattern (every bit one), res[1] the
// other NaNs and infinities, res[2] and res[3] their first indices (~0:
// none). Each thread counts its elements and adds once at the end.
extern "C" __global__ void tf_specials(const u8 *p, u64 n, long long dt, u64 *res)
{
	u32 ex = dt == 3 ? 0x7f800000u : dt == 1 ? 0x7c00u : 0x7f80u;
	u32 all = dt == 3 ? 0xffffffffu : 0xffffu;
	u64 stride = (u64)gridDim.x * blockDim.x;
	u64 np = 0, no = 0, fp = ~0ULL, fo = ~0ULL;
	for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
		u32 w = dt == 3 ? ((const u32 *)p)[e] : (u32)((const u16 *)p)[e];
		if ((w & ex) != ex)
			continue;
		if (w == all) {
			if (np++ == 0)
				fp = e;
		} else if (no++ == 0) {
			fo = e;
		}
	}
	if (np) {
		tf_red_add(&res[0], np);
		tf_red_min(&res[2], fp);
	}
	if (no) {
		tf_red_add(&res[1], no);
		tf_red_min(&res[3], fo);
	}
}

// tf_gather: out[j] = element idx[j] of p (elements of es bytes).
extern "C" __global__ void tf_gather(const u8 *p, long long es, const u64 *idx, u64 n, u8 *out)
{
	u64 stride = (u64)gridDim.x * blockDim.x;
	for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride) {
		u64 e = idx[j];
		if (es == 4)
			((u32 *)out)[j] = ((const u32 *)p)[e];
		else if (es == 2)
			((u16 *)out)[j] = ((const u16 *)p)[e];
		else
			out[j] = p[e];
	}
}
