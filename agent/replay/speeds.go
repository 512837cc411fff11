package replay

import (
	"fmt"
	"math"
)

// Speeds are an engine's throughput in tokens a second: Prefill for the
// prompt tokens it processes anew, Decode for the tokens it generates.
// They turn a row's tokens into engine time (Row.EngineSeconds), so that a
// fold's note or summary, which the model must generate token by token,
// is weighed against the prefill it saves.
type Speeds struct {
	Prefill float64
	Decode  float64
}

// DefaultSpeeds are a 27–32B model at 4-bit on one consumer GPU of the
// RTX 3090/4090 class with some 32k tokens of context in the cache: typical
// llama.cpp llama-bench figures for such a model at that depth are several
// hundred prompt tokens a second and a few tens of generated ones. They
// are round figures for that class of machine, not a measurement.
var DefaultSpeeds = Speeds{Prefill: 800, Decode: 40}

// Seconds is the engine time of prefilled and decoded tokens at s:
// prefilled ÷ Prefill + decoded ÷ Decode. It counts no other cost (no
// network, no sampling overhead, no queueing).
func (s Speeds) Seconds(prefilled, decoded int) float64 {
	return float64(prefilled)/s.Prefill + float64(decoded)/s.Decode
}

// Check reports a speed that is not a positive, finite number of tokens a
// second.
func (s Speeds) Check() error {
	for _, v := range []struct {
		name string
		tps  float64
	}{{"prefill", s.Prefill}, {"decode", s.Decode}} {
		if !(v.tps > 0) || math.IsInf(v.tps, 0) {
			return fmt.Errorf("the %s speed must be a positive number of tokens a second, not %v", v.name, v.tps)
		}
	}
	return nil
}
