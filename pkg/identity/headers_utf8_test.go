package identity

import (
	"net/http/httptest"
	"testing"
)

func TestHeadersRefuseUnprintableNames(t *testing.T) {
	for _, tc := range []struct{ name, subject, orgs string }{
		{"latin-1 byte in subject", "bob\xe9", "acme"},
		{"latin-1 byte in orgs", "bob", "acme,\xe9quipe"},
		{"control character", "b\x01ob", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set(SubjectHeader, tc.subject)
			r.Header.Set(OrganizationsHeader, tc.orgs)
			if id, ok := (Headers{}).Resolve(r); ok {
				t.Errorf("resolved %+v", id)
			}
		})
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set(SubjectHeader, "josé")
	r.Header.Set(OrganizationsHeader, "営業部")
	if id, ok := (Headers{}).Resolve(r); !ok || id.Subject != "josé" || id.Organizations[0] != "営業部" {
		t.Errorf("valid UTF-8 refused: %+v %v", id, ok)
	}
}
