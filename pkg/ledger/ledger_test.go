package ledger

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseOutboxPayload(t *testing.T) {
	by := "alice"
	good, _ := json.Marshal(AdmissionTuples("a1", "t1", "acme", &by))
	if p, err := ParseOutboxPayload(good); err != nil || len(p.Writes) != 3 {
		t.Fatalf("%+v %v", p, err)
	}
	if p := AdmissionTuples("a1", "t1", "acme", nil); len(p.Writes) != 2 {
		t.Errorf("no submitter must mean no owner tuple: %+v", p)
	}
	for _, tc := range []struct{ in, want string }{
		{`[]`, "is not an object: array"},
		{`"x"`, "is not an object: string"},
		{`null`, "is not an object: null"},
		{`{`, "is not JSON"},
		{`{}`, "has nothing to write or delete"},
		{`{"writes":{}}`, "malformed `writes`: object, not an array"},
		{`{"writes":[{"user":"user:a","relation":"owner"}]}`, "item 0 is not {user, relation, object}"},
		{`{"writes":[{"user":"user:a","relation":"owner","object":3}]}`, "object is not a string"},
		{`{"writes":[{"user":"alice","relation":"owner","object":"capture_job:1"}]}`, `user "alice" is not type:id`},
		{`{"deletes":[{"user":"user:a","relation":"","object":"capture_job:1"}]}`, "malformed `deletes`"},
		{`{"writes":[],"extra":1}`, `unknown key "extra"`},
	} {
		_, err := ParseOutboxPayload([]byte(tc.in))
		var m *MalformedPayloadError
		if !errors.As(err, &m) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseOutboxPayload(f *testing.F) {
	for _, s := range []string{`{"writes":[{"user":"user:a","relation":"owner","object":"capture_job:1"}]}`, `{"deletes":[]}`,
		`{"writes":[{"user":"user:c","relation":"viewer","object":"archive:1","condition":{"name":"non_expired_grant","context":{"grant_duration":"3600s"}}}]}`, `[]`, `{"writes":[{}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseOutboxPayload(data)
		if err != nil {
			return
		}
		if len(p.Writes)+len(p.Deletes) == 0 {
			t.Fatal("accepted an empty payload")
		}
		for _, tu := range append(p.Writes, p.Deletes...) {
			if tu.Validate() != nil {
				t.Fatalf("accepted an invalid tuple %v", tu)
			}
		}
		// What was accepted survives a round trip unchanged.
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseOutboxPayload(again)
		if err != nil || len(q.Writes) != len(p.Writes) || len(q.Deletes) != len(p.Deletes) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
