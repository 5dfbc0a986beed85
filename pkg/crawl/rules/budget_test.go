package rules

import (
	"reflect"
	"testing"
)

func TestPlanNextLevel(t *testing.T) {
	abc := []string{"a", "b", "c"}
	tests := []struct {
		name                                 string
		candidates                           []string
		nextDepth, maxDepth, maxPages, known int
		take                                 []string
		reason                               string
	}{
		{"all fit", abc, 1, 2, 30, 1, abc, ""},
		{"exact fit is not a cut", abc, 1, 2, 4, 1, abc, ""},
		{"one too many", abc, 1, 2, 3, 1, []string{"a", "b"}, StopMaxPages},
		{"partial cut keeps the first", abc, 1, 2, 2, 1, []string{"a"}, StopMaxPages},
		{"no room", abc, 1, 2, 5, 5, nil, StopMaxPages},
		{"over budget", abc, 1, 2, 5, 7, nil, StopMaxPages},
		{"no room and no candidates", nil, 1, 2, 5, 5, nil, StopMaxPages},
		{"depth beyond max", abc, 3, 2, 30, 1, nil, StopMaxDepth},
		{"depth checked before pages", abc, 3, 2, 1, 1, nil, StopMaxDepth},
		{"depth beyond max with nothing to follow", nil, 1, 0, 30, 1, nil, StopMaxDepth},
		{"last allowed depth", abc, 2, 2, 30, 1, abc, ""},
		{"no candidates within limits", nil, 1, 2, 30, 1, nil, ""},
		{"default budget: 29 after the seed", make([]string, 40), 1, 2, 30, 1, make([]string, 29), StopMaxPages},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			take, reason := PlanNextLevel(tt.candidates, tt.nextDepth, tt.maxDepth, tt.maxPages, tt.known)
			if reason != tt.reason || len(take) != len(tt.take) || (len(take) > 0 && !reflect.DeepEqual(take, tt.take)) {
				t.Errorf("PlanNextLevel = %v, %q; want %v, %q", take, reason, tt.take, tt.reason)
			}
		})
	}
	t.Run("appending to the result does not touch the candidates", func(t *testing.T) {
		in := []string{"a", "b", "c"}
		take, _ := PlanNextLevel(in, 1, 2, 2, 0)
		_ = append(take, "x")
		if in[2] != "c" {
			t.Errorf("candidates changed: %v", in)
		}
	})
}
