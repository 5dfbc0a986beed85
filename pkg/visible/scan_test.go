package visible

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// TestScanKeep: Keep is not asked about candidates known to be invisible;
// one it refuses is examined but neither chosen nor counted visible, nor
// checked itself; archives its visible settles are checked once in the
// request (counted in Checked, remembered by the scan's own checks), and
// the ledger's record drops unrecorded ones without a check.
func TestScanKeep(t *testing.T) {
	t.Parallel()
	cands := make([]int, 12)
	for i := range cands {
		cands[i] = i
	}
	archive := func(c int) string { return "a" + strconv.Itoa(c) }
	var asked []string
	var keepSaw []int
	sc := Scan[int]{
		Caller: "alice", Size: 4, WholeChunks: true, Chunk: 6,
		Fetch: func(_ context.Context, after *int, n int) ([]int, error) {
			from := 0
			if after != nil {
				from = *after + 1
			}
			return cands[min(from, len(cands)):min(from+n, len(cands))], nil
		},
		Archive: archive,
		Check: func(_ context.Context, ids []string) ([]bool, error) {
			asked = append(asked, ids...)
			out := make([]bool, len(ids))
			for i, id := range ids {
				out[i] = id != "a3" && id != "a20" // a3 denied; a20 (a later capture) denied
			}
			return out, nil
		},
		Recorded: func(_ context.Context, ids []string) (map[string]bool, error) {
			out := map[string]bool{}
			for _, id := range ids {
				out[id] = id != "a21" // a21 not recorded for the caller
			}
			return out, nil
		},
		// Even candidates have a later capture: 0 → a1 (visible: dropped),
		// 2 → a20 (denied: kept), 4 → a21 (not recorded: kept), 6 → a7
		// (visible: dropped), 8 → a9, 10 → a11 (visible: dropped).
		Keep: func(ctx context.Context, cs []int, visible func(ctx context.Context, ids []string) (map[string]bool, error)) ([]bool, error) {
			keepSaw = append(keepSaw, cs...)
			later := map[int]string{0: "a1", 2: "a20", 4: "a21", 6: "a7", 8: "a9", 10: "a11"}
			var ids []string
			for _, c := range cs {
				if id, ok := later[c]; ok {
					ids = append(ids, id)
				}
			}
			vis, err := visible(ctx, ids)
			if err != nil {
				return nil, err
			}
			out := make([]bool, len(cs))
			for i, c := range cs {
				out[i] = !vis[later[c]]
			}
			return out, nil
		},
	}
	r, err := sc.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 4, 5}; !reflect.DeepEqual(r.Chosen, want) {
		t.Errorf("chosen %v, want %v", r.Chosen, want)
	}
	if slices.Contains(keepSaw, 3) {
		t.Errorf("Keep was asked about candidate 3, whose archive is denied: %v", keepSaw)
	}
	// The first batch (0–3, the page's size) leaves two places; the next
	// (4–9, sized by what was seen) fills them and is examined whole:
	// visible 1, 2, 4, 5, 7, 9 (0, 6 and 8 dropped, 3 denied).
	if r.Examined != 10 || r.Visible != 6 || !r.Full {
		t.Errorf("examined %d visible %d full %v, want 10, 6, true", r.Examined, r.Visible, r.Full)
	}
	seen := map[string]int{}
	for _, id := range asked {
		seen[id]++
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("%s checked %d times", id, n)
		}
	}
	if seen["a21"] != 0 {
		t.Error("a21, not recorded for the caller, was checked")
	}
	if want := len(asked); r.Checked != want {
		t.Errorf("Checked %d, want %d (every archive asked about)", r.Checked, want)
	}
	if fmt.Sprint(seen["a20"]) != "1" {
		t.Errorf("a20 asked %d times, want once", seen["a20"])
	}

	// Without the ledger's record, Keep is asked first and a candidate it
	// refuses is never checked itself: 0 and 6 (dropped) are not asked
	// about. a21, which only the record hid, is now visible: 4 is dropped.
	asked, keepSaw = nil, nil
	sc.Recorded = nil
	r, err = sc.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 5, 7}; !reflect.DeepEqual(r.Chosen, want) {
		t.Errorf("without the record: chosen %v, want %v", r.Chosen, want)
	}
	if slices.Contains(asked, "a0") || slices.Contains(asked, "a6") {
		t.Errorf("without the record: asked %v, want no check of a0 and a6 (refused by Keep)", asked)
	}
	if !slices.Contains(asked, "a21") || !slices.Contains(asked, "a3") {
		t.Errorf("without the record: asked %v, want a21 and a3 among them", asked)
	}
}
