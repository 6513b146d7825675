package builtin

import (
	"regexp"
	"strings"
	"testing"
)

// splitSource splits a family's Source at its #line 1 directives into the
// files joinSource put together: the prelude, then name → text in order.
func splitSource(src string) (prelude string, names, texts []string) {
	parts := strings.Split(src, "\n#line 1 \"")
	prelude = parts[0]
	for _, p := range parts[1:] {
		name, text, ok := strings.Cut(p, "\"\n")
		if !ok {
			return prelude, nil, nil
		}
		names, texts = append(names, name), append(texts, text)
	}
	return prelude, names, texts
}

// TestSharedSources checks how every built-in family's Source is put
// together: the shared files (ptx_common.cuh, f16_common.h, the fused
// cores) verbatim, each once and in order, then the family's own file
// verbatim and last; a family that shares nothing is its file alone. Every
// function of a shared file is defined once in the whole text (a copy left
// in a family's file would be a second definition), and the family's own
// file uses the shared functions it no longer defines.
func TestSharedSources(t *testing.T) {
	ptx, f16, epi, core := ptxCommon(), f16Common(), epilogueCommon(), wgmmaCore()
	cudaFused := srcFile{"fused_common.cu", cudaFusedCommon}
	cpuFused := srcFile{"fused_common.c", cpuFusedCommon}
	want := map[string][]srcFile{
		"cuda gemm_f16":      {ptx, {"gemm_f16.cu", cudaGemmF16Source}},
		"cuda gemm_stream":   {ptx, {"gemm_stream.cu", cudaGemmStreamSource}},
		"cuda gemm_wgmma":    {core, {"gemm_wgmma.cu", cudaGemmWgmmaSource}},
		"cuda hc_up_f16":     {ptx, epi, cudaFused, {"hc_up_f16.cu", cudaHcUpSource}},
		"cuda hc_up_wgmma":   {core, epi, {"hc_up_wgmma.cu", cudaHcUpWgmmaSource}},
		"cuda swiglu_f16":    {ptx, epi, cudaFused, {"swiglu_f16.cu", cudaSwigluSource}},
		"cuda swiglu_wgmma":  {core, epi, {"swiglu_wgmma.cu", cudaSwigluWgmmaSource}},
		"cuda gemm_q8_f16":   {ptx, epi, cudaFused, {"gemm_q8_f16.cu", cudaGemmQ8Source}},
		"cuda gemm_q8_wgmma": {core, {"gemm_q8_wgmma.cu", cudaGemmQ8WgmmaSource}},
		"cpu gemm_f16":       {f16, {"gemm_f16.c", cpuGemmF16Source}},
		"cpu hc_up_f16":      {f16, cpuFused, {"hc_up_f16.c", cpuHcUpSource}},
		"cpu swiglu_f16":     {f16, cpuFused, {"swiglu_f16.c", cpuSwigluSource}},
		"cpu gemm_q8_f16":    {f16, cpuFused, {"gemm_q8_f16.c", cpuGemmQ8Source}},
	}
	defRE := regexp.MustCompile(`(?m)^(?:template <[^>]*> )?(?:__device__ __forceinline__|static inline) [\w ]+?\b(\w+)\(`)
	sharedFuncs := func(text string) []string {
		var out []string
		for _, m := range defRE.FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
		return out
	}
	if got := sharedFuncs(ptx.text); len(got) != 8 {
		t.Fatalf("ptx_common.cuh defines %v, want the 8 wrappers", got)
	}
	if got := sharedFuncs(epi.text); len(got) != 8 {
		t.Fatalf("epilogue_common.cuh defines %v, want h2f, the 5 rounded operations, mix4 and act", got)
	}
	if got := sharedFuncs(f16.text); len(got) != 2 {
		t.Fatalf("f16_common.h defines %v, want h2f_soft and f2h_soft", got)
	}
	seen := 0
	for _, f := range New().Families() {
		key := f.Backend + " " + f.Name
		files, ok := want[key]
		_, names, texts := splitSource(f.Source)
		if !ok {
			if names != nil || !strings.Contains(f.Source, "tilefit_") {
				t.Errorf("%s: a one-file family's Source has #line parts %v", key, names)
			}
			continue
		}
		seen++
		if len(names) != len(files) {
			t.Errorf("%s: files %v, want %d", key, names, len(files))
			continue
		}
		for i, w := range files {
			if names[i] != w.name || texts[i] != w.text {
				t.Errorf("%s: file %d is %q (%d bytes), want %q verbatim (%d bytes)", key, i, names[i], len(texts[i]), w.name, len(w.text))
			}
		}
		if last := names[len(names)-1]; last != f.SourceFile {
			t.Errorf("%s: last file %q, want SourceFile %q", key, last, f.SourceFile)
		}
		// Every function of the epilogue arithmetic is defined once, in
		// epilogue_common.cuh, wherever it is part of the text.
		if strings.Contains(f.Source, "#line 1 \"epilogue_common.cuh\"") {
			for _, fn := range sharedFuncs(epi.text) {
				defs := 0
				for _, g := range sharedFuncs(f.Source) {
					if g == fn {
						defs++
					}
				}
				if defs != 1 {
					t.Errorf("%s: %s defined %d times in the compiled text, want once (in %s)", key, fn, defs, epi.name)
				}
			}
		}
		shared := ptx
		if f.Backend == "cpu" {
			shared = f16
		}
		if !strings.Contains(f.Source, "#line 1 \""+shared.name+"\"") {
			continue // the wgmma families: their core defines its own
		}
		for _, fn := range sharedFuncs(shared.text) {
			use := regexp.MustCompile(`\b` + fn + `(<[^>()]*>)?\(`)
			if n := len(use.FindAllStringIndex(f.Source, -1)) - len(use.FindAllStringIndex(shared.text, -1)); n < 1 {
				t.Errorf("%s: %s is defined in %s but used nowhere else", key, fn, shared.name)
			}
			defs := 0
			for _, g := range sharedFuncs(f.Source) {
				if g == fn {
					defs++
				}
			}
			if defs != 1 {
				t.Errorf("%s: %s defined %d times in the compiled text, want once (in %s)", key, fn, defs, shared.name)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("checked %d families, want %d", seen, len(want))
	}
}
