package manifest

import (
	"errors"
	"reflect"
	"testing"
)

func TestArchiveFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file       string
		configured string
		want       ArchiveRow
		wantNoArch *NoArchiveError
		wantErr    string
	}{
		{
			file: "v12_success.result.json", configured: "browserhive",
			want: ArchiveRow{
				TaskID:        "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4",
				CorrelationID: ptr("ab12cd34"),
				Bucket:        "browserhive",
				ObjectKey:     "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4_ab12cd34.wacz",
				SourceURL:     "https://example.com/",
				Labels:        []string{},
				WaczComplete:  ptr(true),
				CapturedAt:    mustTime(t, "2026-09-24T00:00:04.210Z"),
			},
		},
		{
			file: "protobuf_success.result.json", configured: "browserhive",
			want: ArchiveRow{
				TaskID:        "7c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e",
				CorrelationID: ptr("9f8e7d6c"),
				Bucket:        "browserhive",
				ObjectKey:     "7c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e_9f8e7d6c_news%5Fjp-日本語 +1.wacz",
				SourceURL:     "https://www.example.jp/ニュース?page=1",
				Labels:        []string{"news_jp", "日本語"},
				WaczComplete:  ptr(false),
				Signed:        ptr(true),
				CapturedAt:    mustTime(t, "2026-08-20T03:15:00Z"),
			},
		},
		{
			file: "incomplete_signed.result.json", configured: "browserhive",
			want: ArchiveRow{
				TaskID:        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
				CorrelationID: ptr("11223344"),
				Bucket:        "browserhive",
				ObjectKey:     "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d_11223344_media.wacz",
				SourceURL:     "https://video.example.com/watch?v=1",
				Labels:        []string{"media"},
				WaczComplete:  ptr(false),
				Signed:        ptr(true),
				CapturedAt:    mustTime(t, "2026-10-10T01:10:10.101Z"),
			},
		},
		{
			file: "legacy_v1_8.result.json", configured: "browserhive",
			want: ArchiveRow{
				TaskID:       "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
				Bucket:       "browserhive",
				ObjectKey:    "archive/c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f.wacz",
				SourceURL:    "https://example.com/legacy",
				Labels:       []string{},
				WaczComplete: ptr(true),
				CapturedAt:   mustTime(t, "2026-07-29T12:01:41.870Z"),
			},
		},
		{
			file: "unknown_fields.result.json", configured: "browserhive",
			want: ArchiveRow{
				TaskID:       "b7a6c5d4-e3f2-4a1b-9c8d-7e6f5a4b3c2d",
				Bucket:       "browserhive",
				ObjectKey:    "b7a6c5d4-e3f2-4a1b-9c8d-7e6f5a4b3c2d_.wacz",
				SourceURL:    "https://example.com/withheld",
				Labels:       []string{},
				WaczComplete: ptr(true),
				Signed:       ptr(false),
				CapturedAt:   mustTime(t, "2026-11-01T00:00:00Z"),
			},
		},
		{
			file: "sink_success.result.json", configured: "ledger",
			want: ArchiveRow{
				TaskID:        "f0e1d2c3-b4a5-4968-8776-655443322110",
				CorrelationID: ptr("5f0c1b2a-9d8e-4f7a-8b6c-5d4e3f2a1b0c"),
				Bucket:        "ledger",
				ObjectKey:     "org/acme/2026-11/f0e1d2c3-b4a5-4968-8776-655443322110_5f0c1b2a-9d8e-4f7a-8b6c-5d4e3f2a1b0c_crawl_depth-1.wacz",
				SourceURL:     "https://blog.example.com/post",
				Labels:        []string{"crawl", "depth-1"},
				WaczComplete:  ptr(true),
				CapturedAt:    mustTime(t, "2026-11-15T06:07:08.900Z"),
			},
		},
		{
			file: "cancelled.result.json", configured: "browserhive",
			wantNoArch: &NoArchiveError{
				TaskID: "5a0c9e1b-2d3f-4e5a-b6c7-d8e9f0a1b2c3", Status: StatusFailed, ErrorType: ErrorTypeCancelled,
				Message: "the caller cancelled the capture (deadline exceeded); the page was closed",
			},
		},
		{
			file: "protobuf_cancelled.result.json", configured: "browserhive",
			wantNoArch: &NoArchiveError{
				TaskID: "e4d3c2b1-a098-4f76-8e54-3210fedcba98", Status: StatusFailed, ErrorType: ErrorTypeCancelled,
				Message: "capture cancelled by client",
			},
		},
		{
			file: "failed.result.json", configured: "browserhive",
			wantNoArch: &NoArchiveError{
				TaskID: "91b2c3d4-e5f6-4071-8293-a4b5c6d7e8f9", Status: StatusFailed, ErrorType: ErrorTypeInternal,
				Message: "net::ERR_CONNECTION_REFUSED at http://127.0.0.1:9/",
			},
		},
		{
			file: "http_error.result.json", configured: "browserhive",
			wantNoArch: &NoArchiveError{
				TaskID: "3e2d1c0b-a9f8-4e7d-9c6b-5a4f3e2d1c0b", Status: StatusHTTPError, ErrorType: ErrorTypeHTTP,
				Message: "HTTP 404: Not Found",
			},
		},
		{
			file: "snake_case.result.json", configured: "browserhive",
			wantNoArch: &NoArchiveError{
				TaskID: "d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70", Status: StatusHTTPError, ErrorType: ErrorTypeHTTP,
				Message: "HTTP 503: Service Unavailable",
			},
		},
		{
			// The original took the WACZ bucket from the manifest; we do not.
			file: "v2_success.result.json", configured: "browserhive",
			wantErr: "manifest: artifacts.wacz: written to bucket captures, but the ledger reads browserhive: s3://captures/0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31_abc123de_news-daily.wacz",
		},
		{
			file: "v12_success.result.json", configured: "ledger",
			wantErr: "manifest: artifacts.wacz: written to bucket browserhive, but the ledger reads ledger: s3://browserhive/2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4_ab12cd34.wacz",
		},
	}
	for _, tt := range tests {
		t.Run(tt.file+"@"+tt.configured, func(t *testing.T) {
			m, err := Decode(readFixture(t, tt.file))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			row, err := m.Archive(tt.configured)
			switch {
			case tt.wantNoArch != nil:
				if !errors.Is(err, ErrNoArchive) {
					t.Fatalf("Archive = %+v, %v; want ErrNoArchive", row, err)
				}
				var na *NoArchiveError
				if !errors.As(err, &na) {
					t.Fatalf("error %T is not a *NoArchiveError", err)
				}
				if *na != *tt.wantNoArch {
					t.Errorf("NoArchiveError = %+v, want %+v", *na, *tt.wantNoArch)
				}
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Archive error = %v\n            want %s", err, tt.wantErr)
				}
				if errors.Is(err, ErrNoArchive) {
					t.Errorf("a location outside the bucket must not read as no-archive")
				}
				var mismatch *BucketMismatchError
				if !errors.As(err, &mismatch) {
					t.Errorf("error does not wrap a *BucketMismatchError")
				}
			default:
				if err != nil {
					t.Fatalf("Archive: %v", err)
				}
				if !reflect.DeepEqual(row, tt.want) {
					t.Errorf("Archive:\n got %#v\nwant %#v", row, tt.want)
				}
			}
		})
	}
}

func TestArchiveDecision(t *testing.T) {
	t.Parallel()
	base := func() Manifest {
		return Manifest{
			TaskID:    "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4",
			URL:       "https://example.com/",
			Labels:    []string{"a"},
			Status:    StatusSuccess,
			Artifacts: Artifacts{WACZ: "s3://ledger/k.wacz"},
		}
	}
	tests := []struct {
		name    string
		edit    func(m *Manifest)
		wantKey string
		wantErr string
		isNoArc bool
		isNotS3 bool
	}{
		{"success with wacz", func(m *Manifest) {}, "k.wacz", "", false, false},
		{"success without wacz", func(m *Manifest) { m.Artifacts = Artifacts{PNG: "s3://ledger/k.png"} },
			"", "capture produced no archive: task 2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4 ended success without a wacz artifact", true, false},
		{"failed with a stray wacz", func(m *Manifest) { m.Status = StatusFailed },
			"", "capture produced no archive: task 2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4 ended failed", true, false},
		{"timeout", func(m *Manifest) {
			m.Status, m.Artifacts = StatusTimeout, Artifacts{}
			m.Error = &ErrorDetails{Type: ErrorTypeTimeout, Message: "Timeout: goto (30000ms)"}
		}, "", "capture produced no archive: task 2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4 ended timeout (timeout: Timeout: goto (30000ms))", true, false},
		{"type without message", func(m *Manifest) {
			m.Status, m.Error = StatusFailed, &ErrorDetails{Type: ErrorTypeCancelled}
		}, "", "capture produced no archive: task 2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4 ended failed (cancelled)", true, false},
		{"message without type", func(m *Manifest) {
			m.Status, m.Error = StatusFailed, &ErrorDetails{Message: "boom"}
		}, "", "capture produced no archive: task 2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4 ended failed (boom)", true, false},
		{"sink answered a URL", func(m *Manifest) { m.Artifacts.WACZ = "https://sink.example/k.wacz" },
			"", "manifest: artifacts.wacz: not an s3:// location the ledger can read: https://sink.example/k.wacz", false, true},
		{"wacz without key", func(m *Manifest) { m.Artifacts.WACZ = "s3://ledger/" },
			"", "manifest: artifacts.wacz: not an s3:// location the ledger can read: s3://ledger/", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			tt.edit(&m)
			row, err := m.Archive("ledger")
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Archive: %v", err)
				}
				if row.ObjectKey != tt.wantKey || row.Bucket != "ledger" {
					t.Errorf("row = %+v, want key %q in ledger", row, tt.wantKey)
				}
				return
			}
			if err == nil {
				t.Fatalf("Archive = %+v, want error %q", row, tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error = %q\n      want %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrNoArchive) != tt.isNoArc {
				t.Errorf("errors.Is(err, ErrNoArchive) = %v, want %v", !tt.isNoArc, tt.isNoArc)
			}
			if errors.Is(err, ErrNotS3Location) != tt.isNotS3 {
				t.Errorf("errors.Is(err, ErrNotS3Location) = %v, want %v", !tt.isNotS3, tt.isNotS3)
			}
			if !reflect.DeepEqual(row, ArchiveRow{}) {
				t.Errorf("Archive returned a row %+v with its error", row)
			}
		})
	}
}

func TestArchiveSharesNothing(t *testing.T) {
	t.Parallel()
	m := Manifest{TaskID: "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4", URL: "u", Labels: []string{"a"},
		CorrelationID: ptr("c"), WaczComplete: ptr(true), Signed: ptr(true),
		Status: StatusSuccess, Artifacts: Artifacts{WACZ: "s3://b/k"}}
	row, err := m.Archive("b")
	if err != nil {
		t.Fatal(err)
	}
	row.Labels[0] = "changed"
	*row.CorrelationID, *row.WaczComplete, *row.Signed = "changed", false, false
	if m.Labels[0] != "a" || *m.CorrelationID != "c" || !*m.WaczComplete || !*m.Signed {
		t.Errorf("changing the row changed the manifest: %+v", m)
	}
}
