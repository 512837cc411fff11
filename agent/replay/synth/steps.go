package synth

// step makes round n: a fixed opening, then actions drawn by phase.
func (b *builder) step(n int) {
	if b.spec.mix == "unseen" {
		b.stepUnseen(n)
		return
	}
	focus := b.spec.focus
	switch n {
	case 1:
		b.say("I'll start with the layout of the repository.")
		b.listDir(n, "")
		return
	case 2:
		b.say("Let me see the files in %s.", focus)
		b.listDir(n, focus)
		return
	case 3:
		b.say("The package doc should say how the pieces fit.")
		b.readFile(n, focus+"/doc.go")
		b.notes(n)
		return
	}
	if b.hasDue(n, "notes") {
		b.notesRound(n)
		return
	}
	switch b.spec.mix {
	case "small":
		b.stepSmall(n)
		return
	case "logs":
		b.stepLogs(n)
		return
	}
	if b.hasDue(n, "log") {
		b.say("Running the tests to see the failure for myself.")
		b.testLog(n, true)
		return
	}
	b.stepMixed(n)
}

// stepMixed makes round n of the mixed session: exploring (reads and
// searches) for its first 44 rounds, then mostly edits, tests and short
// commands, with a long log now and then.
func (b *builder) stepMixed(n int) {
	explore := n < 45
	r := b.rng.Float64()
	switch {
	case explore && r < 0.34, !explore && r < 0.11:
		b.sayRead()
		b.readFile(n, b.readTarget())
	case explore && r < 0.50, !explore && r < 0.19:
		b.say("Searching for where that is used.")
		b.grepSmall(n)
	case explore && r < 0.58, !explore && r < 0.215:
		b.say("I need every place that touches this; a broad search first.")
		b.grepFlood(n)
	case explore && r < 0.63, !explore && r < 0.235:
		b.say("Listing the directory to find the related files.")
		b.listDir(n, b.pick(b.src.dirs))
	case explore && r < 0.70, !explore && r < 0.26:
		b.say("Reading that part of the file again, with the lines around it.")
		b.readRange(n)
	case explore && r < 0.76:
		b.say("Let me read this and search for its callers at the same time.")
		b.readFile(n, b.readTarget())
		b.grepSmall(n)
	case r < 0.275:
		b.say("Running the whole suite to see where we stand.")
		b.testLog(n, false)
	case r < 0.285:
		b.say("Building everything with -x to see what the toolchain does with the change.")
		b.buildLog(n)
	case r < 0.68:
		b.editRound(n)
	case r < 0.83:
		b.say("Running the focused test.")
		b.smallTest(n)
	case r < 0.985:
		b.smallCommand(n)
	default:
		b.writeTest(n)
	}
}

// smallMax is the largest result of the many-small session.
const smallMax = 6000

// stepSmall makes round n of a session of small results: targeted
// searches, short reads, short commands, small edits, listings.
func (b *builder) stepSmall(n int) {
	r := b.rng.Float64()
	switch {
	case r < 0.22:
		b.say("Searching for exactly that name.")
		if !b.grepTargeted(n) {
			b.readSmall(n)
		}
	case r < 0.46:
		b.say("%s", b.pick([]string{"Reading just that part of the file.", "A short look at the lines around it.",
			"Checking the few lines that matter here."}))
		b.readSmall(n)
	case r < 0.56:
		b.say("Running the focused test.")
		b.smallTest(n)
	case r < 0.68:
		b.smallCommand(n)
	case r < 0.93:
		b.editRound(n)
	case r < 0.97:
		b.say("Listing the package to find the related files.")
		b.listDir(n, b.spec.focus)
	default:
		b.writeTest(n)
	}
}

// stepLogs makes round n of a session of long logs between reads and
// edits.
func (b *builder) stepLogs(n int) {
	if b.hasDue(n, "loghead") || b.hasDue(n, "log") {
		b.say("Running the suite again; the CI log says what it ran with at the top.")
		b.longLog(n)
		return
	}
	r := b.rng.Float64()
	switch {
	case r < 0.07:
		b.say("%s", b.pick([]string{"Running the whole suite with -race.", "Building everything verbosely to see the failure.",
			"Let me see the full CI log again."}))
		b.longLog(n)
	case r < 0.32:
		b.sayRead()
		b.readFile(n, b.readTarget())
	case r < 0.42:
		b.say("Reading that part of the file again, with the lines around it.")
		b.readRange(n)
	case r < 0.52:
		b.say("Searching for where that is used.")
		b.grepSmall(n)
	case r < 0.76:
		b.editRound(n)
	case r < 0.86:
		b.say("Running the focused test.")
		b.smallTest(n)
	default:
		b.smallCommand(n)
	}
}

// stepUnseen makes round n of an unseen session: listings of the tree and
// the package, the big file read whole on its rounds, the facts due in
// their places, and otherwise a round of the run's kind.
func (b *builder) stepUnseen(n int) {
	switch {
	case n == 1:
		b.say("I'll start with the layout of %s.", b.spec.tree)
		b.listDir(n, b.spec.tree)
	case n == 2:
		b.say("Let me see the files in %s.", b.spec.focus)
		b.listDir(n, b.spec.focus)
	case b.spec.bigReads[n]:
		b.say("The task points at %s; reading it whole.", b.spec.big)
		b.readWhole(n, b.spec.big)
	case b.hasDue(n, "notes"):
		b.notesRound(n)
	case b.hasDue(n, "short"):
		b.shortRound(n)
	case b.hasDue(n, "loghead") || b.hasDue(n, "log"):
		b.say("Running the package's tests in CI's way; the log says what it ran with at the top.")
		b.longLogSized(n, 61<<10, 138<<10, true)
	default:
		switch b.spec.modes[n] {
		case "tiny":
			b.stepTiny(n)
		case "small":
			b.stepSmall(n)
		case "logs":
			b.stepLogs(n)
		default:
			b.stepMixed(n)
		}
	}
}

// stepTiny makes a round of tiny results, a few hundred bytes each: short
// commands, one test, small edits.
func (b *builder) stepTiny(n int) {
	r := b.rng.Float64()
	switch {
	case r < 0.4:
		b.smallCommand(n)
	case r < 0.65:
		b.say("Running the focused test.")
		b.smallTest(n)
	default:
		b.editRound(n)
	}
}
