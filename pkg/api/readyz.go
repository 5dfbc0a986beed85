package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
)

// Readiness runs the dependency checks /readyz answers (app.App.Readiness
// adapts the health checks to it).
type Readiness interface {
	Ready(ctx context.Context) []ReadyCheck
}

// ReadyCheck is one dependency check as /readyz reports it.
type ReadyCheck struct {
	// Name is the dependency: "postgres", "openfga", "s3".
	Name string
	// Failed says the dependency is not ready; any other verdict is "ok".
	Failed bool
	// Reason is the short phrase shown for a failure: fixed words, never an
	// address, a key or an error text.
	Reason string
	// Detail is what was found, for the log only.
	Detail string
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
	ready := true
	for _, res := range rs {
		if res.Failed {
			ready = false
			s.logger().Warn("not ready", "check", res.Name, "detail", res.Detail)
		}
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, readyBody{Ready: ready, Checks: rs})
}

// readyBody keeps the checks in the order they were run.
type readyBody struct {
	Ready  bool
	Checks []ReadyCheck
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
		word := "ok"
		if r.Failed {
			word = r.Reason
		}
		k, _ := json.Marshal(r.Name)
		v, _ := json.Marshal(word)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteString("}}")
	return buf.Bytes(), nil
}
