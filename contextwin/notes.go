package contextwin

// noteResults lays out, in msgs (the view's messages), the current
// round's results for the note round. Every result of the round no
// request carried (every one, when the request is over limit) stands as
// its summary; then the newest ones, newest first, take back their text
// while the request and the question (extra bytes) fit in limit tokens
// and the share bytes allow: whole, or their head and tail cut to fit
// (cutMiddle), never under minCut bytes. It returns the request's size
// and fresh bytes without the question.
//
// The note is written from the newest results, which the summaries alone
// hid from it. What it carries of them costs twice: the fold after the
// note changes the request before them, and the engine prefills them
// again. The share (noteShare) bounds that.
func (s *Planner) noteResults(msgs []Message, cur, limit, share, extra int) (size, fresh int) {
	size, fresh = s.counted()
	var round []int // view items of the round's results that give way, newest first
	// The results a request carried already stay as they were sent
	// (the note round is an append), unless the request is over.
	over := s.price(size+extra, fresh+extra) > limit
	for k := s.view.Len() - 1; k >= 0 && s.view.items[k].of >= cur; k-- {
		it := &s.view.items[k]
		if it.msg.Role != Tool || it.of < s.sent && !over {
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

// noteShare is what the note round carries of the round's results,
// beyond their summaries, in bytes: a quarter of the recap's budget
// (noteSharePart), from a window of noteShareFrom tokens on. On the
// replay (dense) it cost the rows 0.02–0.03 of their ratio at 32k and
// 0–0.03 at 128k, all within their bounds; at 16k it cost 0.02–0.03 too,
// which took long-logs past its bound (1.12), so a 16k window's note
// round carries summaries only, as before.
func noteShare(b Budget, e Estimator) int {
	if b.Window < noteShareFrom {
		return 0
	}
	return e.NewChars(b.Recap / noteSharePart)
}

const (
	noteSharePart = 4
	noteShareFrom = 24000
)
