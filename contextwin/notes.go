package contextwin

// noteResults lays out, in msgs (the view's messages), the current
// round's results for the note round. Every result of the round stands as
// its summary; then the newest ones, newest first, take back their text
// while the request and the question (extra bytes) fit in limit tokens
// and the share bytes allow: whole, or their head and tail cut to fit
// (cutMiddle), never under minCut bytes. It returns the request's size
// and fresh bytes without the question.
//
// The note is written from the newest results, which the summaries alone
// hid from it (every note round of a 16k session saw only them). What it
// carries of them costs twice: the fold after the note changes the
// request before them, and the engine prefills them again. The share
// bounds that (noteSharePart).
func (s *Planner) noteResults(msgs []Message, cur, limit, share, extra int) (size, fresh int) {
	size, fresh = s.counted()
	var round []int // view items of the round's results that give way, newest first
	for k := s.view.Len() - 1; k >= 0 && s.view.items[k].of >= cur; k-- {
		it := &s.view.items[k]
		if it.msg.Role != Tool {
			continue
		}
		sum, keep := s.summarize(it.of)
		if keep {
			continue
		}
		m := it.msg
		m.Content = sum
		msgs[k] = m
		size += sizeOf(m) - it.size
		fresh += sizeOf(m) - it.fresh
		round = append(round, k)
	}
	for _, k := range round {
		room := min(s.est.NewChars(limit-s.price(size+extra, fresh+extra))-32, share)
		it := &s.view.items[k]
		grow := it.size - sizeOf(msgs[k])
		if room < minCut || grow <= 0 {
			break
		}
		m := it.msg
		if grow > room {
			m.Content = cutMiddle(it.msg.Content, len(msgs[k].Content)+room, s.log[it.of].Payload)
		}
		d := sizeOf(m) - sizeOf(msgs[k])
		share -= d
		size += d
		fresh += d
		msgs[k] = m
	}
	return size, fresh
}

// noteSharePart: the note round carries of the round's results, beyond
// their summaries, what a part of the recap's budget holds (one in so
// many). On the replay (dense) a quarter cost the rows 0.02–0.03 of their
// ratio at 16k and 0–0.03 at 128k, half of it 0.03–0.05 at every window;
// on vLLM, a whole recap's 0.08 at 16k.
const noteSharePart = 4
