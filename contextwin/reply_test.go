package contextwin

import "testing"

// TestMaxTokensIsTheRoomLeft: once the engine has counted a request, a
// new result no request carried yet is priced at the learned ratio for
// max_tokens, not at the cautious 1.6 bytes a token decisions use: the
// reply gets the room the window has, less the margin.
func TestMaxTokensIsTheRoomLeft(t *testing.T) {
	b := newBuild(Config{Window: 16000, PrefixChars: 4000})
	b.user("read f.go")
	b.send()
	b.call(Read, "f.go", text(12000, 1))
	p := b.s.Plan()
	if p.Event != Append {
		t.Fatalf("event %v, want an append", p.Event)
	}
	likely := b.s.est.Known(b.s.cfg.PrefixChars + b.s.countedSize())
	if want := 16000 - likely - likely/replySlack - maxTokensMargin; p.MaxTokens != want {
		t.Errorf("MaxTokens = %d, want %d (window less the likely %d tokens, their slack and the margin; the cautious estimate is %d)", p.MaxTokens, want, likely, p.Estimate)
	}
	if p.MaxTokens <= 16000-p.Estimate-maxTokensMargin {
		t.Errorf("MaxTokens = %d, no more than the cautious estimate leaves (%d)", p.MaxTokens, 16000-p.Estimate-maxTokensMargin)
	}
}

// TestMaxTokensBeforeAnyCount: before the engine has counted anything,
// max_tokens rests on the cautious estimate.
func TestMaxTokensBeforeAnyCount(t *testing.T) {
	b := newBuild(Config{Window: 16000, PrefixChars: 4000})
	b.user("read f.go")
	b.call(Read, "f.go", text(12000, 1))
	p := b.s.Plan()
	if want := 16000 - p.Estimate - maxTokensMargin; p.MaxTokens != want {
		t.Errorf("MaxTokens = %d, want %d", p.MaxTokens, want)
	}
}
