package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON writes the report as one JSON document (schema "tilefit.report/v1",
// described in full in docs/report-json.md):
//
//	{
//	  "schema": "tilefit.report/v1",
//	  "title": string, "generated": RFC 3339 time (UTC),
//	  "provenances": [{                  // one per provenance key, first seen first
//	    "key": string, "provenance": {backend, device, arch, compiler, flags,
//	        driver, family, source_hash, out_f16},
//	    "device": {"props": {string: string}, "measured": time}, // optional
//	    "reference": string,             // the reference tile most cells use
//	    "rounds", "sets", "dispatches": [min, max],
//	    "started", "finished": time, "runs": int, "vendors": [string],
//	    "parity": {"all_bitwise": bool, "summary": string, "vendors": string,
//	        "tiles", "shapes", "ms", "checked", "unchecked": int,
//	        "differ": [{"shape", "m", "tile", "status", "bitwise"}]},
//	    "chunk": [shape name],           // the shapes the totals add up
//	    "totals": [{"m", "reference_ms", "best_ms", "vendor_ms": {vendor: ms},
//	        "best_over_reference", "vendor_over_best": {vendor: ratio},
//	        "missing": [string]}],
//	    "cells": [{"shape", "n", "k", "m", "calls", "in_chunk", "flops",
//	        "reference", "reference_us", "best", "best_us", "best_gflops",
//	        "fastest": [tile], "undecided": [tile], "aa": {"pairs", "median", "min", "max"},
//	        "runs": [{"started", "finished", "rounds", "sets", "seed", "clocks"}],
//	        "candidates": [{"tile", "params", "vendor", "aa", "status", "detail",
//	            "bitwise", "max_err", "compile_seconds", "dispatches", "run",
//	            "samples", "median_us", "min_us", "max_us", "gflops",
//	            "ratio_to_reference", "ranked_us", "verdict", "samples_us": [µs]}]}],
//	    "failures": [{"shape", "n", "k", "m", "tile", "vendor", "status", "detail"}],
//	    "decisions": {"comparisons", "faster", "slower", "tie", "undecided",
//	        "confidence", "expected_false"}
//	  }]
//	}
//
// Times are µs per call; ms are per chunk. A number with no value (no
// samples, a failed candidate, an incomplete sum, NaN) is null. Arrays are
// never null.
func JSON(w io.Writer, in Input) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(build(in)); err != nil {
		return fmt.Errorf("write JSON report: %w", err)
	}
	return nil
}
