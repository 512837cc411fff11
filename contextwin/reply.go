package contextwin

// replyBase is the prompt size, in tokens, that max_tokens leaves the
// window's rest after: once the engine has counted a request, the request
// of chars bytes (the fixed prefix included) with every byte at the
// learned ratio — what the engine will most likely count — and a
// sixteenth more (replySlack); before, est, the cautious estimate. The
// cautious estimate prices new bytes at 1.6 a token, and a reply sized
// from it got a fraction of the room the window had (1,665 tokens where
// 6,925 were free). An engine that refuses a prompt and max_tokens over
// its window (vLLM) still may, when the new bytes run denser than the
// ratio learned: the agent then asks again with the room its figures
// leave.
func (s *Planner) replyBase(est, chars int) int {
	if s.est.Ratio == 0 {
		return est
	}
	likely := s.est.Known(chars)
	return min(est, likely+likely/replySlack)
}

// replySlack is the share, one in so many, the likely count is taken
// higher for max_tokens: on the replay's vLLM rows, with the margin of
// 384 alone, 5 to 33 requests a row were refused for their max_tokens;
// with it, at most one.
const replySlack = 16
