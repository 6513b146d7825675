// mma_peak: the mma.sync.m16n8k16 f16×f16→f32 issue rate with no memory
// traffic, shaped like gemm_f16 (same entry and launch geometry: a block of
// WARPS warps per TM×TN tile, each warp a (TM/WM)×(TN/WN) warp tile), so that
// 2·M·N·K / time is the tile's arithmetic ceiling. Each warp runs K/16 steps
// of MI·NI independent mma on register fragments; Y gets one sum per thread.
#ifndef TM
#define TM 128
#endif
#ifndef TN
#define TN 256
#endif
#ifndef WARPS
#define WARPS 8
#endif
#ifndef WM
#define WM 2
#endif
constexpr int WN = WARPS / WM;
constexpr int MI = TM / WM / 16, NI = TN / WN / 8;
typedef unsigned int u32;

extern "C" __global__ void __launch_bounds__(WARPS * 32) tilefit_gemm_f16(const unsigned short *X, const unsigned short *W, void *Y, long long M64, long long N64, long long K64) {
	const int M = (int)M64, N = (int)N64, K = (int)K64;
	u32 a[MI][4], b[NI][2];
	const u32 seed = threadIdx.x * 0x9E3779B9u + blockIdx.x;
#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int e = 0; e < 4; e++)
			a[i][e] = (seed ^ (i * 4 + e)) & 0x3BFF3BFFu; // finite halves in (-1, 1)
#pragma unroll
	for (int j = 0; j < NI; j++)
#pragma unroll
		for (int e = 0; e < 2; e++)
			b[j][e] = (seed + j * 2 + e) & 0x3BFF3BFFu;
	float acc[MI][NI][4] = {};
	for (int k = 0; k < K; k += 16) {
#pragma unroll
		for (int i = 0; i < MI; i++)
#pragma unroll
			for (int j = 0; j < NI; j++)
				asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
				    : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
				    : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]), "r"(b[j][1]));
	}
	float s = 0;
#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int j = 0; j < NI; j++)
			s += acc[i][j][0] + acc[i][j][1] + acc[i][j][2] + acc[i][j][3];
	const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (t < (long long)M * N)
		reinterpret_cast<float *>(Y)[t] = s;
}
