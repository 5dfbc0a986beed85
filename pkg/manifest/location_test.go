package manifest

import (
	"errors"
	"strings"
	"testing"
)

func TestParseS3Location(t *testing.T) {
	t.Parallel()
	tests := []struct {
		loc        string
		wantBucket string
		wantKey    string
		wantErr    string
	}{
		{"s3://browserhive/a.wacz", "browserhive", "a.wacz", ""},
		{"s3://b/org/acme/2026-11/x_.result.json", "b", "org/acme/2026-11/x_.result.json", ""},
		{"s3://b/with space+plus/日本語.wacz", "b", "with space+plus/日本語.wacz", ""},
		{"s3://b/percent%2Fkept%20", "b", "percent%2Fkept%20", ""},
		{"s3://b//leading-slash", "b", "/leading-slash", ""},
		{"s3://b/trailing/", "b", "trailing/", ""},
		{"s3://b/q?x=1#f", "b", "q?x=1#f", ""},
		{"", "", "", "not an s3:// location the ledger can read: "},
		{"s3://", "", "", "not an s3:// location the ledger can read: s3://"},
		{"s3://bucket", "", "", "not an s3:// location the ledger can read: s3://bucket"},
		{"s3://bucket/", "", "", "not an s3:// location the ledger can read: s3://bucket/"},
		{"s3:///key", "", "", "not an s3:// location the ledger can read: s3:///key"},
		{"S3://bucket/key", "", "", "not an s3:// location the ledger can read: S3://bucket/key"},
		{" s3://bucket/key", "", "", "not an s3:// location the ledger can read:  s3://bucket/key"},
		{"s3:/bucket/key", "", "", "not an s3:// location the ledger can read: s3:/bucket/key"},
		{"https://sink.example/api/sink/x", "", "", "not an s3:// location the ledger can read: https://sink.example/api/sink/x"},
		{"bucket/key", "", "", "not an s3:// location the ledger can read: bucket/key"},
	}
	for _, tt := range tests {
		t.Run(tt.loc, func(t *testing.T) {
			bucket, key, err := ParseS3Location(tt.loc)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseS3Location(%q) = %q, %q; want error", tt.loc, bucket, key)
				}
				if err.Error() != tt.wantErr {
					t.Errorf("error = %q, want %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrNotS3Location) {
					t.Errorf("error does not wrap ErrNotS3Location")
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseS3Location(%q): %v", tt.loc, err)
			}
			if bucket != tt.wantBucket || key != tt.wantKey {
				t.Errorf("ParseS3Location(%q) = %q, %q; want %q, %q", tt.loc, bucket, key, tt.wantBucket, tt.wantKey)
			}
		})
	}
}

func TestManifestOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		location   string
		reported   string
		configured string
		want       Outcome
	}{
		{"inside", "s3://ledger/org/acme/2026-11/x_.result.json", "", "ledger",
			Outcome{Key: "org/acme/2026-11/x_.result.json"}},
		{"key verbatim", "s3://ledger/a b+c/日本語_.result.json", "", "ledger",
			Outcome{Key: "a b+c/日本語_.result.json"}},
		{"reported error kept", "", "sink did not answer within 10s", "ledger",
			Outcome{Error: "sink did not answer within 10s"}},
		{"reported error wins over a location", "s3://ledger/k", "write failed", "ledger",
			Outcome{Error: "write failed"}},
		{"other bucket", "s3://browserhive/x_.result.json", "", "ledger",
			Outcome{Error: "written to bucket browserhive, but the ledger reads ledger: s3://browserhive/x_.result.json"}},
		{"bucket compare is exact", "s3://Ledger/k", "", "ledger",
			Outcome{Error: "written to bucket Ledger, but the ledger reads ledger: s3://Ledger/k"}},
		{"not s3", "https://sink.example/x_.result.json", "", "ledger",
			Outcome{Error: "not an s3:// location the ledger can read: https://sink.example/x_.result.json"}},
		{"no key", "s3://ledger/", "", "ledger",
			Outcome{Error: "not an s3:// location the ledger can read: s3://ledger/"}},
		{"nothing reported", "", "", "ledger",
			Outcome{Error: "not an s3:// location the ledger can read: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ManifestOutcome(tt.location, tt.reported, tt.configured); got != tt.want {
				t.Errorf("ManifestOutcome = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestKeyInBucketErrors(t *testing.T) {
	t.Parallel()
	_, err := KeyInBucket("s3://other/k.links.json", "ledger")
	var mismatch *BucketMismatchError
	if !errors.As(err, &mismatch) {
		t.Fatalf("error %v is not a *BucketMismatchError", err)
	}
	want := BucketMismatchError{Location: "s3://other/k.links.json", Bucket: "other", Configured: "ledger"}
	if *mismatch != want {
		t.Errorf("mismatch = %+v, want %+v", *mismatch, want)
	}
	if _, err := KeyInBucket("other/k", "ledger"); !errors.Is(err, ErrNotS3Location) {
		t.Errorf("error %v does not wrap ErrNotS3Location", err)
	}
	key, err := KeyInBucket("s3://ledger/k.links.json", "ledger")
	if err != nil || key != "k.links.json" {
		t.Errorf("KeyInBucket = %q, %v; want k.links.json", key, err)
	}
}

// TestKeyInBucketRefusesKeys: a key that could name another object than the
// one it spells (dot and empty segments), or that S3 and PostgreSQL cannot
// hold, is refused wherever a location is read, and the reason is the
// manifest error recorded for it.
func TestKeyInBucketRefusesKeys(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("k", MaxKeyBytes)
	tests := []struct {
		loc  string
		want string // "" = accepted
	}{
		{"s3://b/a/b.wacz", ""},
		{"s3://b/" + long, ""},
		{"s3://b/.hidden/..x/x../a.b/...", ""},
		{"s3://b/日本語/a b+c.wacz", ""},
		{"s3://b/../other-org/x.wacz", `not an s3:// location the ledger can read (a ".." key segment): s3://b/../other-org/x.wacz`},
		{"s3://b/org/acme/../../x.wacz", `not an s3:// location the ledger can read (a ".." key segment): s3://b/org/acme/../../x.wacz`},
		{"s3://b/org/..", `not an s3:// location the ledger can read (a ".." key segment): s3://b/org/..`},
		{"s3://b/./x", `not an s3:// location the ledger can read (a "." key segment): s3://b/./x`},
		{"s3://b/org/.", `not an s3:// location the ledger can read (a "." key segment): s3://b/org/.`},
		{"s3://b//leading-slash", `not an s3:// location the ledger can read (an empty key segment): s3://b//leading-slash`},
		{"s3://b/a//b", `not an s3:// location the ledger can read (an empty key segment): s3://b/a//b`},
		{"s3://b/trailing/", `not an s3:// location the ledger can read (an empty key segment): s3://b/trailing/`},
		{"s3://b/" + long + "k", `not an s3:// location the ledger can read (a key of 1025 bytes, longer than 1024): s3://b/` + long + "k"},
		{"s3://b/a\x00b", "not an s3:// location the ledger can read (a key holding U+0000): s3://b/a\x00b"},
		{"s3://b/a\xffb", "not an s3:// location the ledger can read (a key that is not UTF-8): s3://b/a\xffb"},
	}
	for _, tt := range tests {
		t.Run(tt.loc[:min(len(tt.loc), 40)], func(t *testing.T) {
			key, err := KeyInBucket(tt.loc, "b")
			if tt.want == "" {
				if err != nil || "s3://b/"+key != tt.loc {
					t.Fatalf("KeyInBucket = %q, %v", key, err)
				}
				if err := CheckKey(key); err != nil {
					t.Errorf("CheckKey(%q) = %v", key, err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("KeyInBucket = %q, %v\nwant error %q", key, err, tt.want)
			}
			var ke *KeyError
			if !errors.As(err, &ke) || !errors.Is(err, ErrNotS3Location) || key != "" {
				t.Errorf("error %T does not wrap a *KeyError and ErrNotS3Location", err)
			}
			if out := ManifestOutcome(tt.loc, "", "b"); out != (Outcome{Error: tt.want}) {
				t.Errorf("ManifestOutcome = %+v", out)
			}
			_, k, perr := ParseS3Location(tt.loc)
			if perr != nil {
				t.Fatal(perr)
			}
			if err := CheckKey(k); err == nil || !strings.HasPrefix(err.Error(), "not an object key the ledger can read (") {
				t.Errorf("CheckKey(%q) = %v", k, err)
			}
		})
	}
	// The bucket is checked first: a foreign bucket is named as such.
	if _, err := KeyInBucket("s3://other/../k", "b"); err == nil || err.Error() != "written to bucket other, but the ledger reads b: s3://other/../k" {
		t.Errorf("foreign bucket: %v", err)
	}
}

// TestArchiveRefusesBadWACZKey: a manifest whose WACZ key has a ".."
// segment is not admitted (and so never signed).
func TestArchiveRefusesBadWACZKey(t *testing.T) {
	t.Parallel()
	m := Manifest{TaskID: "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4", URL: "u", Labels: []string{},
		Status: StatusSuccess, Artifacts: Artifacts{WACZ: "s3://ledger/org/acme/../../other/x.wacz"}}
	row, err := m.Archive("ledger")
	want := `manifest: artifacts.wacz: not an s3:// location the ledger can read (a ".." key segment): s3://ledger/org/acme/../../other/x.wacz`
	if err == nil || err.Error() != want || row.ObjectKey != "" {
		t.Fatalf("Archive = %+v, %v\nwant %s", row, err, want)
	}
}
