package rules

// Stop reasons of a crawl.
const (
	StopCompleted = "completed"
	StopMaxDepth  = "max_depth"
	StopMaxPages  = "max_pages"
	StopFailed    = "failed"
)

// PlanNextLevel decides which candidate URLs of a level's report become
// the next level, and whether a limit cut the crawl:
//   - nextDepth > maxDepth: nothing, "max_depth" (depth is checked first:
//     it is the limit that took effect first);
//   - room = maxPages - known; room <= 0: nothing, "max_pages";
//   - more candidates than room: the first room of them, "max_pages" (a
//     partial cut is still a cut);
//   - otherwise all of them, "" (an exact fit is not a cut).
//
// known counts every crawl_pages row of the crawl, whatever its state; the
// seeds count against maxPages.
func PlanNextLevel(candidates []string, nextDepth, maxDepth, maxPages, known int) (take []string, stopReason string) {
	if nextDepth > maxDepth {
		return nil, StopMaxDepth
	}
	room := maxPages - known
	if room <= 0 {
		return nil, StopMaxPages
	}
	if len(candidates) > room {
		return candidates[:room:room], StopMaxPages
	}
	return candidates[:len(candidates):len(candidates)], ""
}
