package contextwin

// The view: what the next request carries after the fixed prefix.

// What an item of the view stands for, besides an entry of the transcript
// (its index, 0 or more).
const (
	frontRecap  = -1 // the recap after the fixed prefix, when it stands alone
	middleRecap = -2 // the recap between the older turns and the newest
)

// item is one message of the view: what it stands for (an entry's index,
// frontRecap or middleRecap), the message as the request carries it, its
// size in bytes (sizeOf(msg), always) and how many of them no request has
// carried yet (fresh, at most size).
type item struct {
	of    int
	msg   Message
	size  int
	fresh int
}

// View is the request after the fixed prefix, as a list of items in
// request order: the front recap first when it stands alone, then the
// entries in transcript order, the middle recap among them between the
// last entry before it and the first after it.
//
// Its totals are kept by construction: Size and Fresh are always the sums
// of its items' sizes and fresh bytes, and an item's size is always its
// message's. Only push, truncate, replace and carry change the items, and
// each changes the totals with them; nothing else writes either. The View
// owns its messages: Messages lends them, never to be changed. Outside the
// package a View is read-only (Planner.View).
type View struct {
	items       []item
	size, fresh int
	mid         int // the index of the middle recap's item, -1 when there is none
	// msgs are the items' messages, in step with items: Messages hands
	// out msgs itself, its capacity cut to its length, and lent says it
	// did. A lent array is never written again where it was lent: push
	// writes only past every lent length, and truncate and replace copy
	// the array first. So a plan costs what changed, not the view's
	// length, and a request the planner keeps (the last one sent) stays
	// as it was sent.
	msgs []Message
	lent bool
}

// newView is an empty view.
func newView() View { return View{mid: -1} }

// Len is the number of messages in the view.
func (v *View) Len() int { return len(v.items) }

// Size is the view's bytes as the request carries them, msgOverhead per
// message included.
func (v *View) Size() int { return v.size }

// Fresh is how many of the view's bytes no request has carried yet: what
// the engine must prefill anew if the next request is sent as it stands.
func (v *View) Fresh() int { return v.fresh }

// push appends m, standing for of, with fresh of its bytes new to the
// engine.
func (v *View) push(of int, m Message, fresh int) {
	size := sizeOf(m)
	if of == middleRecap {
		v.mid = len(v.items)
	}
	v.items = append(v.items, item{of: of, msg: m, size: size, fresh: fresh})
	v.msgs = append(v.msgs, m)
	v.size += size
	v.fresh += fresh
}

// truncate drops the items from index k on.
func (v *View) truncate(k int) {
	for _, it := range v.items[k:] {
		v.size -= it.size
		v.fresh -= it.fresh
	}
	clear(v.items[k:]) // let the dropped messages go
	v.items = v.items[:k]
	v.own()
	clear(v.msgs[k:])
	v.msgs = v.msgs[:k]
	if v.mid >= k {
		v.mid = -1
	}
}

// replace puts m, with fresh of its bytes new, in place of item k's
// message; the item stands for what it stood for.
func (v *View) replace(k int, m Message, fresh int) {
	it := &v.items[k]
	size := sizeOf(m)
	v.size += size - it.size
	v.fresh += fresh - it.fresh
	it.msg, it.size, it.fresh = m, size, fresh
	v.own()
	v.msgs[k] = m
}

// own copies the messages' array before a write to a place Messages may
// have lent.
func (v *View) own() {
	if v.lent {
		v.msgs, v.lent = append(make([]Message, 0, cap(v.msgs)), v.msgs...), false
	}
}

// carry records that a request carried item k: none of its bytes is new
// any more.
func (v *View) carry(k int) {
	v.fresh -= v.items[k].fresh
	v.items[k].fresh = 0
}

// find returns the index of the item standing for of (an entry's index,
// frontRecap or middleRecap), or -1 when the view does not hold it. Items
// are in transcript order on either side of the middle recap, so a binary
// search finds an entry.
func (v *View) find(of int) int {
	switch of {
	case frontRecap:
		if len(v.items) > 0 && v.items[0].of == frontRecap {
			return 0
		}
		return -1
	case middleRecap:
		return v.mid
	}
	lo, hi := 0, len(v.items)
	if lo < hi && v.items[0].of == frontRecap {
		lo++
	}
	if v.mid >= 0 {
		if v.mid+1 < hi && of >= v.items[v.mid+1].of {
			lo = v.mid + 1
		} else {
			hi = v.mid
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if v.items[m].of < of {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(v.items) && v.items[lo].of == of {
		return lo
	}
	return -1
}

// sizeAt is the size of the item standing for of, 0 when there is none.
func (v *View) sizeAt(of int) int {
	if k := v.find(of); k >= 0 {
		return v.items[k].size
	}
	return 0
}

// sizeBefore is the bytes of the items before item k.
func (v *View) sizeBefore(k int) int {
	n := 0
	for _, it := range v.items[:k] {
		n += it.size
	}
	return n
}

// freshAt is the fresh bytes of the item standing for of, 0 when there is
// none.
func (v *View) freshAt(of int) int {
	if k := v.find(of); k >= 0 {
		return v.items[k].fresh
	}
	return 0
}

// Messages returns the view's messages as they stand, which the view
// never changes after (see View.msgs): the caller may keep them, and
// append to them (its capacity is its length, so an append copies), but
// must not write its elements.
func (v *View) Messages() []Message {
	v.lent = true
	return v.msgs[:len(v.msgs):len(v.msgs)]
}
