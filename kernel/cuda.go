package kernel

// cudaFamily returns the CUDA gemm_f16 family, or nil while there is none.
func cudaFamily() *Family { return nil }
