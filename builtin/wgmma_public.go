package builtin

// WgmmaFamilySource is the text a family of its own on the Hopper mainloop
// compiles (for a program outside this module, e.g. examples/gemmbias):
// prelude (defines the core reads, e.g. its producer hooks WG_STAGE_EXTRA,
// WG_FULL_TX, …), then src/cuda/wgmma_core.cuh, then the family's file
// (name, text), each after a #line directive. The family's file supplies a
// Producer and an Epilogue and a kernel entry that calls
// wg_kernel(producer, epilogue, tilesM, tilesN, nk); wgmma_core.cuh's
// header comment is the contract. Stages of BM rows of an A operand and BN
// rows of a B operand (64 k each, 128-byte swizzled) are gemm_wgmma's, so
// such a family can take gemm_wgmma's parameters, Restrict and Plan
// (CUDAGemmWgmma) and change only the entry and its arguments.
func WgmmaFamilySource(prelude, name, text string) string {
	return joinSource(prelude, wgmmaCore(), srcFile{name, text})
}
