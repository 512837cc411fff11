package contextwin

// CacheLost tells the planner that the engine holds nothing of the
// conversation any more, not even the fixed prefix: the model was put to
// sleep or unloaded (llama.cpp's router mode), or the engine restarted.
// It is SlotTaken with the prefix gone too: the next request prefills
// everything, which the planner prices, and folds first where SlotTaken
// would; and since the mirror of the engine's cache is then empty, where
// that request restarts (at 0) teaches the cache model nothing. It
// reports whether the next Plan folds.
//
// (A separate addition to the cost model: it only empties the mirror
// SlotTaken leaves holding the prefix.)
func (s *Planner) CacheLost() bool {
	fold := s.SlotTaken()
	t := &s.cache
	t.engine.n, t.engine.points = 0, nil
	return fold
}
