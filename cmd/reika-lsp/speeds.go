package main

import (
	"flag"
	"fmt"
	"math"

	"github.com/reika-lsp/reika/agent/replay"
)

// speedFlags adds --prefill-tps and --decode-tps to fs, the speeds at
// which replay prices its rows in engine seconds. The func it returns
// gives them once fs is parsed, or says which one is no speed.
func speedFlags(fs *flag.FlagSet) func() (replay.Speeds, error) {
	d := replay.DefaultSpeeds
	prefill := fs.Float64("prefill-tps", d.Prefill, "the engine's prefill speed for engine_s, `N` prompt tokens a second; the default is a 27–32B model on one consumer GPU at 32k")
	decode := fs.Float64("decode-tps", d.Decode, "the engine's decode speed for engine_s, `N` generated tokens a second; the default is the same model and GPU")
	return func() (replay.Speeds, error) {
		for _, f := range []struct {
			name string
			tps  float64
		}{{"--prefill-tps", *prefill}, {"--decode-tps", *decode}} {
			if !(f.tps > 0) || math.IsInf(f.tps, 0) {
				return replay.Speeds{}, fmt.Errorf("%s must be a positive number of tokens a second, not %v", f.name, f.tps)
			}
		}
		return replay.Speeds{Prefill: *prefill, Decode: *decode}, nil
	}
}
