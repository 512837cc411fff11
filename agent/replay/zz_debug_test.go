package replay

import (
	"context"
	"fmt"
	"sort"
	"testing"
)

func TestZZDebugLongLogs(t *testing.T) {
	s, err := LoadSession("../../testdata/sessions/long-logs.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replay(context.Background(), s, 16000, "ours")
	if err != nil {
		t.Fatal(err)
	}
	waste := map[string]int{}
	cnt := map[string]int{}
	for i, r := range res.Requests {
		if !r.Extends || r.Side {
			extra := r.PromptN - r.Growth
			fmt.Printf("%3d round %3d %-8s side=%v prompt=%6d cache=%6d new=%6d growth=%6d extra=%6d\n", i, r.Round, r.Event, r.Side, r.PromptTokens, r.CacheN, r.PromptN, r.Growth, extra)
			waste[r.Event] += extra
			cnt[r.Event]++
		} else if r.PromptN > r.Growth+50 {
			waste["append-excess"] += r.PromptN - r.Growth
		}
	}
	var keys []string
	for k := range waste {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%s: n=%d extra=%d\n", k, cnt[k], waste[k])
	}
	fmt.Println(res.Row.Prefilled, res.Row.Growth)
}
