package contextwin

import (
	"fmt"
	"testing"
)

// FuzzPlan drives a session with a random history — users, rounds of
// results of any kind and size, notes that fail, engines that overflow —
// and holds every plan to the invariants the grid checks.
func FuzzPlan(f *testing.F) {
	f.Add(uint16(16000), uint16(3000), []byte("\x01\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc"))
	f.Add(uint16(4096), uint16(0), []byte("\xff\xfe\xfd\x00\x01\x02"))
	f.Add(uint16(0), uint16(500), []byte("\x10\x20\x30\x40"))
	f.Add(uint16(65535), uint16(65535), []byte("\x80\x81\x82\x83\x84\x85\x86\x87"))
	f.Fuzz(func(t *testing.T, window, prefix uint16, ops []byte) {
		w := int(window) * 2 // 0, or up to 131k tokens
		if w > 0 && w < 2000 {
			w += 2000
		}
		cfg := Config{Window: w, PrefixChars: int(prefix) * 4, ReasoningRounds: 2}
		h := newHarness(t, cfg)
		steps := []step{{user: "Do the task in docs/task.md."}}
		for k, op := range ops {
			switch op % 8 {
			case 0:
				steps = append(steps, step{user: fmt.Sprintf("next request %d", k)})
			default:
				var rs []result
				for j := 0; j <= int(op>>6); j++ {
					size := int(op) * int(op) * (j + 1)
					if op%8 == 7 {
						size *= 40 // far larger than the window
					}
					rs = append(rs, result{kind: Kind(int(op>>3) % 7), path: fmt.Sprintf("docs/f%d.md", int(op)%5), chars: size, task: op == 0x91})
				}
				note := "fact: value"
				if op&0x10 != 0 {
					note = ""
				}
				steps = append(steps, step{results: rs, note: note})
			}
		}
		h.run(steps)
	})
}
