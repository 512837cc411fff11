package lsp

// OnMapIdle has f called each time the repo map's worker has caught up
// with every open document, in the servers started from now on; nil stops
// it. Benchmarks use it to measure the map once it holds everything.
func OnMapIdle(f func()) { testHookMapIdle = f }
