// Package workload describes what tilefit tunes: a list of GEMM shapes
// Y[M,N] = X[M,K]·W[N,K]ᵀ (X activations, W weights, both row-major with K
// contiguous) together with the token counts M to tune each shape for.
//
// A Workload comes from a built-in preset (see PresetNames) or from a YAML
// file (see Parse). A file looks like this:
//
//	# my model
//	name: mymodel            # optional; defaults to the file name without extension
//	m: [256, 512, 1983]      # token counts; a single integer is accepted too
//	shapes:
//	  - {name: Wqkv, n: 10240, k: 2560, calls: 37}
//	  - name: Wout
//	    n: 2560
//	    k: 6144
//	    calls: 48            # calls per chunk; optional, default 1
//
// Top-level keys are name, m and shapes; shape keys are name, n, k and calls.
// YAML anchors, aliases and merge keys may be used; top-level keys starting
// with "x-" are ignored, a place to define them:
//
//	x-gate: &gate {k: 2560, calls: 96}
//	shapes:
//	  - {<<: *gate, name: Wg, n: 640}
//
// Names (of the workload and of each shape) are 1 to 64 letters, digits, '_',
// '-' or '.'. N and K must be in 1..MaxDim, M in 1..MaxM, calls at least 1,
// shape names and M values unique, at most MaxShapes shapes and MaxMs M
// values, and no shape's buffers at the largest M (BufferBytes) over
// Options.MaxBytes. Files are read only when they are regular files of at
// most MaxFileBytes.
//
// Every problem in a file is reported, one per line, as
//
//	FILE:LINE: FIELD: message
//
// for example "bad.yaml:7: shapes[1].n: must be > 0, got -4". The error is a
// *ValidationError whose Problems carry the same parts as values.
// Workload.Validate reports the same rules without file and line:
// "shapes[1].n: must be > 0, got -4".
package workload
