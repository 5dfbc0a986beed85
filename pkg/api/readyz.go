package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/capture-ledger/ledgerctl/pkg/health"
)

// Readiness runs the dependency checks /readyz answers (health.Checker).
type Readiness interface {
	Ready(ctx context.Context) []health.Result
}

// readyz answers whether PostgreSQL, OpenFGA and S3 answer: 200
// {"ready":true,"checks":{"postgres":"ok",...}}, or 503 with each failing
// check's short reason. It needs no identity, so it says nothing but the
// dependencies' names and fixed phrases ("unreachable", "timeout",
// "bucket not found", …): no address, key or error text. /healthz stays the
// liveness answer, which never looks at a dependency.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.Readiness == nil {
		writeJSON(w, http.StatusServiceUnavailable, readyBody{Ready: false})
		return
	}
	rs := s.Readiness.Ready(r.Context())
	ready := health.Ready(rs)
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
		for _, res := range rs {
			if res.Status == health.Fail {
				s.logger().Warn("not ready", "check", res.Check, "detail", res.Detail)
			}
		}
	}
	writeJSON(w, status, readyBody{Ready: ready, Checks: rs})
}

// readyBody keeps the checks in the order they were run.
type readyBody struct {
	Ready  bool
	Checks []health.Result
}

func (b readyBody) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"ready":`)
	if b.Ready {
		buf.WriteString("true")
	} else {
		buf.WriteString("false")
	}
	buf.WriteString(`,"checks":{`)
	for i, r := range b.Checks {
		if i > 0 {
			buf.WriteByte(',')
		}
		word := string(health.OK)
		if r.Status == health.Fail {
			word = r.Reason
		}
		k, _ := json.Marshal(r.Check)
		v, _ := json.Marshal(word)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteString("}}")
	return buf.Bytes(), nil
}
