package cli

// checkLaplacian is --check laplacian: the Laplacian known-answer check
// (verify.LaplacianInputs) added to every square cell of a plain GEMM.
const checkLaplacian = "laplacian"
