package contextwin

// This file declares the summary and recap API that the planner calls.

// Fact is one entry of the recap's ledger: an exact fact carried from fold
// to fold (a path, a decision, a constraint).
type Fact struct {
	Key, Value string
}

// LineRange is a span of 1-based lines, both ends included.
type LineRange struct {
	From, To int
}

// FileTouch is a file the folded turns read or changed.
type FileTouch struct {
	Path   string
	Ranges []LineRange // lines read, merged and sorted
	Edited bool
	// Changed are the lines its edits changed, as the diffs' hunks give
	// them in the new file, merged and sorted.
	Changed []LineRange
}

// Recap is what a fold leaves of the turns it folds. Its lists carry over
// into the next recap, which replaces it.
type Recap struct {
	// Note is the fold's note, or the previous one when the fold had none.
	Note string
	// Ledger is the exact facts, those the last note stated first: at
	// least 30, and more while they fit the recap's budget.
	Ledger []Fact
	// Findings are the earlier notes' lines that no later note stated
	// again, newest note first, while they fit the recap's budget.
	Findings []string
	Happened []string    // newest first, at most 200 entries of 240 bytes
	Files    []FileTouch // newest first, at most 40
	Pages    []string    // URLs fetched, newest first, at most 20
	Searches []string    // searches run, newest first, at most 20
	// Commands are the commands run in the folded turns, whose output the
	// request no longer holds, newest first, at most 20.
	Commands []string
	// Text is the rendered recap, at most the budget it was built for.
	// It may leave out items the lists above still hold.
	Text string
	// Earlier is the user's edit of an earlier recap (Planner.EditRecap),
	// carried word for word into every later recap, after what the later
	// folds add, until the user edits again. An edit replaces the lists
	// above: what the user took out does not come back.
	Earlier string
	// named are the files a part of a recap names on its files-changed
	// line; its Files stand as read there (a part leaves their lines to
	// its entries and to the next rewrite). Nil: Files.
	named []FileTouch
}

// RecapInput is what BuildRecap folds.
type RecapInput struct {
	// Note is what the model wrote when asked before the fold; "" when
	// there is none (it failed, or an emergency fold skipped it).
	Note string
	// Previous is the recap being replaced, nil at the first fold.
	Previous *Recap
	// Folded are the messages leaving the request, oldest first.
	Folded []Message
	// Budget bounds len(Recap.Text), in bytes.
	Budget int
	// Part marks a part appended to a recap (Folded since…) or to the
	// middle recap: its entries name what its turns changed and ran, and
	// the trail waits for the next rewrite, which merges the lists.
	Part bool
	// Shown is the text the request carries beside this recap — the
	// user's messages word for word, the recap it is appended to: a fact
	// it states as "key: value" is not repeated under Facts.
	Shown string
}
