#include "textflag.h"

// func dotF16x8(a, b *byte, n int) (sum, mag float64)
//
// Σ a[j]·b[j] and Σ|a[j]·b[j]| over n fp16 elements (n a positive multiple
// of 8): eight elements of each converted to fp32 at a time (VCVTPH2PS),
// multiplied in fp32 (exact: two 11-bit significands), the products
// widened to float64 and added into four float64 lanes for each sum. X15,
// Go's zero register in its internal ABI, is left alone.
TEXT ·dotF16x8(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPD Y0, Y0, Y0 // sum, products 0–3 of each eight
	VXORPD Y1, Y1, Y1 // sum, products 4–7
	VXORPD Y2, Y2, Y2 // mag, products 0–3
	VXORPD Y3, Y3, Y3 // mag, products 4–7
	MOVL $0x7fffffff, AX
	MOVQ AX, X11
	VPBROADCASTD X11, Y11 // fp32 |·| mask

loop:
	VCVTPH2PS (SI), Y4
	VCVTPH2PS (DI), Y5
	VMULPS Y5, Y4, Y4   // eight exact products
	VANDPS Y11, Y4, Y6  // their magnitudes
	VCVTPS2PD X4, Y7
	VEXTRACTF128 $1, Y4, X8
	VCVTPS2PD X8, Y8
	VADDPD Y7, Y0, Y0
	VADDPD Y8, Y1, Y1
	VCVTPS2PD X6, Y9
	VEXTRACTF128 $1, Y6, X10
	VCVTPS2PD X10, Y10
	VADDPD Y9, Y2, Y2
	VADDPD Y10, Y3, Y3
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JNZ  loop

	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VUNPCKHPD X0, X0, X1
	VADDSD X1, X0, X0
	VEXTRACTF128 $1, Y2, X3
	VADDPD X3, X2, X2
	VUNPCKHPD X2, X2, X3
	VADDSD X3, X2, X2
	VZEROUPPER
	MOVSD X0, sum+24(FP)
	MOVSD X2, mag+32(FP)
	RET
