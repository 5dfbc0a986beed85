package ledger

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestParseOutboxPayloadConditions: a write may carry a condition (a share's
// non_expired_grant) and keeps it through a round trip; a delete may not,
// and a condition must be {name, context?}.
func TestParseOutboxPayloadConditions(t *testing.T) {
	share := Tuple{User: "user:carol", Relation: "viewer", Object: "archive:a1", Condition: &Condition{
		Name: "non_expired_grant", Context: map[string]any{"grant_time": "2026-07-29T00:00:00Z", "grant_duration": "3600s"},
	}}
	data, err := json.Marshal(OutboxPayload{Writes: []Tuple{share}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseOutboxPayload(data)
	if err != nil || len(p.Writes) != 1 || !reflect.DeepEqual(p.Writes[0], share) {
		t.Fatalf("round trip: %+v %v", p, err)
	}
	bare := share
	bare.Condition = nil
	if data, _ = json.Marshal(OutboxPayload{Deletes: []Tuple{bare}}); !strings.Contains(string(data), `"deletes":[{"user":"user:carol","relation":"viewer","object":"archive:a1"}]`) {
		t.Errorf("a delete without a condition marshals as %s", data)
	}
	const tu = `"user":"user:c","relation":"viewer","object":"archive:1"`
	for _, tc := range []struct{ in, want string }{
		{`{"deletes":[{` + tu + `,"condition":{"name":"non_expired_grant"}}]}`, "a delete carries no condition"},
		{`{"writes":[{` + tu + `,"condition":"non_expired_grant"}]}`, "condition is string, not an object"},
		{`{"writes":[{` + tu + `,"condition":{}}]}`, "condition has no name"},
		{`{"writes":[{` + tu + `,"condition":{"name":""}}]}`, "condition has no name"},
		{`{"writes":[{` + tu + `,"condition":{"name":"c","context":[]}}]}`, "condition context is array, not an object"},
		{`{"writes":[{` + tu + `,"condition":{"name":"c","when":1}}]}`, `condition has an unknown key "when"`},
		{`{"writes":[{` + tu + `,"extra":{"name":"c"}}]}`, "item 0 is not {user, relation, object}"},
	} {
		_, err := ParseOutboxPayload([]byte(tc.in))
		var m *MalformedPayloadError
		if !errors.As(err, &m) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
}
