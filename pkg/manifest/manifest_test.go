package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts.UTC()
}

func TestDecodeFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want Manifest
	}{
		{
			file: "v12_success.result.json",
			want: Manifest{
				TaskID:         "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4",
				CorrelationID:  ptr("ab12cd34"),
				URL:            "https://example.com/",
				Labels:         []string{},
				Status:         StatusSuccess,
				HTTPStatusCode: ptr(200),
				Timestamp:      mustTime(t, "2026-09-24T00:00:04.210Z"),
				Artifacts: Artifacts{
					Links: "s3://browserhive/2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4_ab12cd34.links.json",
					WACZ:  "s3://browserhive/2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4_ab12cd34.wacz",
				},
				WaczComplete: ptr(true),
			},
		},
		{
			file: "v2_success.result.json",
			want: Manifest{
				TaskID:         "0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31", // upper case in the file
				CorrelationID:  ptr("abc123de"),
				URL:            "https://news.example.org/article/42",
				Labels:         []string{"news", "daily"},
				Status:         StatusSuccess,
				HTTPStatusCode: ptr(200),
				Timestamp:      mustTime(t, "2026-07-29T12:01:41.870Z"),
				Artifacts: Artifacts{
					PNG:   "s3://captures/0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31_abc123de_news-daily.png",
					WebP:  "s3://captures/0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31_abc123de_news-daily.webp",
					HTML:  "s3://captures/0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31_abc123de_news-daily.html",
					Links: "s3://captures/0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31_abc123de_news-daily.links.json",
					MHTML: "s3://captures/0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31_abc123de_news-daily.mhtml",
					WACZ:  "s3://captures/0f8e4b2a-93c1-4d57-a6b0-5e2f1c7d9a31_abc123de_news-daily.wacz",
				},
				WaczComplete: ptr(true),
			},
		},
		{
			file: "protobuf_success.result.json",
			want: Manifest{
				TaskID:         "7c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e",
				CorrelationID:  ptr("9f8e7d6c"),
				URL:            "https://www.example.jp/ニュース?page=1",
				Labels:         []string{"news_jp", "日本語"},
				Status:         StatusSuccess,
				HTTPStatusCode: ptr(200),
				Timestamp:      mustTime(t, "2026-08-20T03:15:00Z"),
				Artifacts: Artifacts{
					WACZ: "s3://browserhive/7c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e_9f8e7d6c_news%5Fjp-日本語 +1.wacz",
				},
				WaczComplete: ptr(false),
				Signed:       ptr(true),
			},
		},
		{
			file: "cancelled.result.json",
			want: Manifest{
				TaskID:        "5a0c9e1b-2d3f-4e5a-b6c7-d8e9f0a1b2c3",
				CorrelationID: ptr("c0ffee01"),
				URL:           "https://slow.example.net/feed",
				Labels:        []string{},
				Status:        StatusFailed,
				Timestamp:     mustTime(t, "2026-10-02T08:30:15.002Z"),
				Error: &ErrorDetails{
					Type:    ErrorTypeCancelled,
					Message: "the caller cancelled the capture (deadline exceeded); the page was closed",
					Step:    "load-pages",
				},
			},
		},
		{
			file: "protobuf_cancelled.result.json",
			want: Manifest{
				TaskID:    "e4d3c2b1-a098-4f76-8e54-3210fedcba98",
				URL:       "https://slow.example.net/archive",
				Labels:    []string{},
				Status:    StatusFailed,
				Timestamp: mustTime(t, "2026-08-25T23:59:59.999Z"),
				Error: &ErrorDetails{
					Type:    ErrorTypeCancelled,
					Message: "capture cancelled by client",
					Step:    "load-pages",
				},
			},
		},
		{
			file: "failed.result.json",
			want: Manifest{
				TaskID:        "91b2c3d4-e5f6-4071-8293-a4b5c6d7e8f9",
				CorrelationID: ptr("deadbeef"),
				URL:           "http://127.0.0.1:9/",
				Labels:        []string{"probe"},
				Status:        StatusFailed,
				Timestamp:     mustTime(t, "2026-08-03T10:00:00.123Z"),
				Error: &ErrorDetails{
					Type:    ErrorTypeInternal,
					Message: "net::ERR_CONNECTION_REFUSED at http://127.0.0.1:9/",
				},
			},
		},
		{
			file: "http_error.result.json",
			want: Manifest{
				TaskID:         "3e2d1c0b-a9f8-4e7d-9c6b-5a4f3e2d1c0b",
				CorrelationID:  ptr("0badf00d"),
				URL:            "https://example.com/missing",
				Labels:         []string{},
				Status:         StatusHTTPError,
				HTTPStatusCode: ptr(404),
				Timestamp:      mustTime(t, "2026-09-30T14:22:07.456Z"),
				Error:          &ErrorDetails{Type: ErrorTypeHTTP, Message: "HTTP 404: Not Found", Step: "load-pages"},
			},
		},
		{
			file: "v2_http_error.result.json",
			want: Manifest{
				TaskID:         "6f5e4d3c-2b1a-4098-a7b6-c5d4e3f2a1b0",
				URL:            "https://example.com/gone",
				Labels:         []string{},
				Status:         StatusHTTPError,
				HTTPStatusCode: ptr(410),
				Timestamp:      mustTime(t, "2026-08-01T09:00:00Z"),
				Error:          &ErrorDetails{Type: ErrorTypeHTTP, Message: "HTTP 410: Gone"},
			},
		},
		{
			file: "incomplete_signed.result.json",
			want: Manifest{
				TaskID:         "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
				CorrelationID:  ptr("11223344"),
				URL:            "https://video.example.com/watch?v=1",
				Labels:         []string{"media"},
				Status:         StatusSuccess,
				HTTPStatusCode: ptr(200),
				Timestamp:      mustTime(t, "2026-10-10T01:10:10.101Z"), // +09:00 in the file
				Artifacts: Artifacts{
					WACZ: "s3://browserhive/a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d_11223344_media.wacz",
				},
				WaczComplete: ptr(false),
				Signed:       ptr(true),
			},
		},
		{
			file: "unknown_fields.result.json",
			want: Manifest{
				TaskID:         "b7a6c5d4-e3f2-4a1b-9c8d-7e6f5a4b3c2d",
				URL:            "https://example.com/withheld",
				Labels:         []string{},
				Status:         StatusSuccess,
				HTTPStatusCode: ptr(200),
				Timestamp:      mustTime(t, "2026-11-01T00:00:00Z"),
				Artifacts: Artifacts{
					WACZ: "s3://browserhive/b7a6c5d4-e3f2-4a1b-9c8d-7e6f5a4b3c2d_.wacz",
				},
				WaczComplete: ptr(true),
				Signed:       ptr(false),
			},
		},
		{
			file: "legacy_v1_8.result.json",
			want: Manifest{
				TaskID:         "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
				URL:            "https://example.com/legacy",
				Labels:         []string{},
				Status:         StatusSuccess,
				HTTPStatusCode: ptr(200),
				Timestamp:      mustTime(t, "2026-07-29T12:01:41.870Z"),
				Artifacts: Artifacts{
					WACZ: "s3://browserhive/archive/c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f.wacz",
				},
				WaczComplete: ptr(true),
			},
		},
		{
			file: "snake_case.result.json",
			want: Manifest{
				TaskID:         "d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70",
				CorrelationID:  ptr("aa55aa55"),
				URL:            "https://example.com/proto-names",
				Labels:         []string{"a"},
				Status:         StatusHTTPError,
				HTTPStatusCode: ptr(503),
				Timestamp:      mustTime(t, "2026-08-30T00:00:00.5Z"),
				Error:          &ErrorDetails{Type: ErrorTypeHTTP, Message: "HTTP 503: Service Unavailable"},
			},
		},
		{
			file: "sink_success.result.json",
			want: Manifest{
				TaskID:         "f0e1d2c3-b4a5-4968-8776-655443322110",
				CorrelationID:  ptr("5f0c1b2a-9d8e-4f7a-8b6c-5d4e3f2a1b0c"),
				URL:            "https://blog.example.com/post",
				Labels:         []string{"crawl", "depth-1"},
				Status:         StatusSuccess,
				HTTPStatusCode: ptr(200),
				Timestamp:      mustTime(t, "2026-11-15T06:07:08.900Z"),
				Artifacts: Artifacts{
					Links: "s3://ledger/org/acme/2026-11/f0e1d2c3-b4a5-4968-8776-655443322110_5f0c1b2a-9d8e-4f7a-8b6c-5d4e3f2a1b0c_crawl_depth-1.links.json",
					WACZ:  "s3://ledger/org/acme/2026-11/f0e1d2c3-b4a5-4968-8776-655443322110_5f0c1b2a-9d8e-4f7a-8b6c-5d4e3f2a1b0c_crawl_depth-1.wacz",
				},
				WaczComplete: ptr(true),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Decode(readFixture(t, tt.file))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decode:\n got %#v\nwant %#v", got, tt.want)
			}
			if got.Timestamp.Location() != time.UTC {
				t.Errorf("Timestamp location = %v, want UTC", got.Timestamp.Location())
			}
		})
	}
}

// minimal is the smallest manifest Decode accepts; tests add or replace
// members in it.
const minimal = `"taskId":"2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4","status":"success","url":"https://example.com/","timestamp":"2026-09-24T00:00:04Z"`

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	const (
		id  = `"taskId":"2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4"`
		st  = `"status":"success"`
		u   = `"url":"https://example.com/"`
		ts  = `"timestamp":"2026-09-24T00:00:04Z"`
		all = id + "," + st + "," + u + "," + ts
	)
	tests := []struct {
		name      string
		in        string
		wantField string
		wantErr   string
	}{
		{"empty input", ``, "", "manifest: not valid JSON: unexpected end of JSON input"},
		{"truncated", `{` + all, "", "manifest: not valid JSON: unexpected end of JSON input"},
		{"trailing garbage", `{` + all + `} x`, "", "manifest: not valid JSON: invalid character 'x' after top-level value"},
		{"array", `[]`, "", "manifest: want a JSON object, got an array"},
		{"string", `"s3://b/k"`, "", "manifest: want a JSON object, got a string"},
		{"null", `null`, "", "manifest: want a JSON object, got null"},
		{"taskId missing", `{` + st + "," + u + "," + ts + `}`, "taskId", "manifest: taskId: missing"},
		{"taskId null", `{"taskId":null,` + st + "," + u + "," + ts + `}`, "taskId", "manifest: taskId: missing"},
		{"taskId not a UUID", `{"taskId":"abc",` + st + "," + u + "," + ts + `}`, "taskId", `manifest: taskId: not a UUID: "abc"`},
		{"taskId braces", `{"taskId":"{2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4}",` + st + "," + u + "," + ts + `}`, "taskId", `manifest: taskId: not a UUID: "{2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4}"`},
		{"taskId no hyphens", `{"taskId":"2b9e63ec4f1a4c6e9d2b7a51c0e8f3d4",` + st + "," + u + "," + ts + `}`, "taskId", `manifest: taskId: not a UUID: "2b9e63ec4f1a4c6e9d2b7a51c0e8f3d4"`},
		{"taskId non-hex", `{"taskId":"2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3dg",` + st + "," + u + "," + ts + `}`, "taskId", `manifest: taskId: not a UUID: "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3dg"`},
		{"taskId hyphen moved", `{"taskId":"2b9e63e-c4f1a-4c6e-9d2b-7a51c0e8f3d4",` + st + "," + u + "," + ts + `}`, "taskId", `manifest: taskId: not a UUID: "2b9e63e-c4f1a-4c6e-9d2b-7a51c0e8f3d4"`},
		{"taskId empty", `{"taskId":"",` + st + "," + u + "," + ts + `}`, "taskId", "manifest: taskId: empty"},
		{"taskId number", `{"taskId":123,` + st + "," + u + "," + ts + `}`, "taskId", "manifest: taskId: want a string, got a number"},
		{"task_id not a UUID", `{"task_id":"x",` + st + "," + u + "," + ts + `}`, "task_id", `manifest: task_id: not a UUID: "x"`},
		{"taskId long garbage is cut", `{"taskId":"` + strings.Repeat("a", 200) + `",` + st + "," + u + "," + ts + `}`, "taskId", `manifest: taskId: not a UUID: "` + strings.Repeat("a", 80) + `"…`},
		{"status missing", `{` + id + "," + u + "," + ts + `}`, "status", "manifest: status: missing"},
		{"status unknown", `{` + id + `,"status":"SUCCESS",` + u + "," + ts + `}`, "status", `manifest: status: unknown value "SUCCESS"`},
		{"status unspecified", `{` + id + `,"status":"CAPTURE_STATUS_UNSPECIFIED",` + u + "," + ts + `}`, "status", `manifest: status: unknown value "CAPTURE_STATUS_UNSPECIFIED"`},
		{"status number", `{` + id + `,"status":1,` + u + "," + ts + `}`, "status", "manifest: status: want a string, got a number"},
		{"url missing", `{` + id + "," + st + "," + ts + `}`, "url", "manifest: url: missing"},
		{"url empty", `{` + id + "," + st + `,"url":"",` + ts + `}`, "url", "manifest: url: empty"},
		{"url object", `{` + id + "," + st + `,"url":{},` + ts + `}`, "url", "manifest: url: want a string, got an object"},
		{"timestamp missing", `{` + id + "," + st + "," + u + `}`, "timestamp", "manifest: timestamp: missing"},
		{"timestamp words", `{` + all + `,"timestamp":"yesterday"}`, "timestamp", `manifest: timestamp: not an RFC 3339 time: "yesterday"`},
		{"timestamp no zone", `{` + all + `,"timestamp":"2026-09-24T00:00:04"}`, "timestamp", `manifest: timestamp: not an RFC 3339 time: "2026-09-24T00:00:04"`},
		{"timestamp month 13", `{` + all + `,"timestamp":"2026-13-01T00:00:00Z"}`, "timestamp", `manifest: timestamp: not an RFC 3339 time: "2026-13-01T00:00:00Z"`},
		{"timestamp epoch number", `{` + all + `,"timestamp":1790000000}`, "timestamp", "manifest: timestamp: want a string, got a number"},
		{"correlationId number", `{` + all + `,"correlationId":5}`, "correlationId", "manifest: correlationId: want a string, got a number"},
		{"labels string", `{` + all + `,"labels":"a"}`, "labels", "manifest: labels: want an array of strings, got a string"},
		{"labels item number", `{` + all + `,"labels":["a",1]}`, "labels[1]", "manifest: labels[1]: want a string, got a number"},
		{"labels item null", `{` + all + `,"labels":[null]}`, "labels[0]", "manifest: labels[0]: want a string, got null"},
		{"httpStatusCode text", `{` + all + `,"httpStatusCode":"abc"}`, "httpStatusCode", `manifest: httpStatusCode: not an integer: "abc"`},
		{"httpStatusCode fraction", `{` + all + `,"httpStatusCode":200.5}`, "httpStatusCode", `manifest: httpStatusCode: not an integer: "200.5"`},
		{"httpStatusCode boolean", `{` + all + `,"httpStatusCode":true}`, "httpStatusCode", "manifest: httpStatusCode: want an integer, got a boolean"},
		{"artifacts string", `{` + all + `,"artifacts":"s3://b/k"}`, "artifacts", "manifest: artifacts: want an object, got a string"},
		{"artifacts.wacz number", `{` + all + `,"artifacts":{"wacz":5}}`, "artifacts.wacz", "manifest: artifacts.wacz: want a string, got a number"},
		{"artifacts.wacz empty", `{` + all + `,"artifacts":{"wacz":""}}`, "artifacts.wacz", "manifest: artifacts.wacz: empty"},
		{"artifacts.png object", `{` + all + `,"artifacts":{"png":{}}}`, "artifacts.png", "manifest: artifacts.png: want a string, got an object"},
		{"completeness array", `{` + all + `,"completeness":[]}`, "completeness", "manifest: completeness: want an object, got an array"},
		{"completeness.complete string", `{` + all + `,"completeness":{"complete":"true"}}`, "completeness.complete", "manifest: completeness.complete: want a boolean, got a string"},
		{"completeness.complete number", `{` + all + `,"completeness":{"complete":1}}`, "completeness.complete", "manifest: completeness.complete: want a boolean, got a number"},
		{"signature boolean", `{` + all + `,"signature":true}`, "signature", "manifest: signature: want an object, got a boolean"},
		{"signature.signed string", `{` + all + `,"signature":{"signed":"yes"}}`, "signature.signed", "manifest: signature.signed: want a boolean, got a string"},
		{"errorDetails string", `{` + all + `,"errorDetails":"boom"}`, "errorDetails", "manifest: errorDetails: want an object, got a string"},
		{"errorDetails.type number", `{` + all + `,"errorDetails":{"type":7}}`, "errorDetails.type", "manifest: errorDetails.type: want a string, got a number"},
		{"error_details.message array", `{` + all + `,"error_details":{"message":[]}}`, "error_details.message", "manifest: error_details.message: want a string, got an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte(tt.in))
			if err == nil {
				t.Fatalf("Decode succeeded with %+v, want error %q", m, tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error = %q\n      want %q", err.Error(), tt.wantErr)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FieldError", err)
			}
			if fe.Field != tt.wantField {
				t.Errorf("Field = %q, want %q", fe.Field, tt.wantField)
			}
			if !reflect.DeepEqual(m, Manifest{}) {
				t.Errorf("Decode returned a partial manifest %+v with its error", m)
			}
		})
	}
}

func TestDecodeOptionalMembers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra string
		check func(t *testing.T, m Manifest)
	}{
		{"nothing optional", ``, func(t *testing.T, m Manifest) {
			if m.Labels == nil || len(m.Labels) != 0 {
				t.Errorf("Labels = %#v, want empty non-nil", m.Labels)
			}
			if m.CorrelationID != nil || m.WaczComplete != nil || m.Signed != nil || m.Error != nil || m.HTTPStatusCode != nil {
				t.Errorf("optional members set: %+v", m)
			}
			if m.Artifacts != (Artifacts{}) {
				t.Errorf("Artifacts = %+v, want none", m.Artifacts)
			}
		}},
		{"nulls are absent", `,"correlationId":null,"labels":null,"artifacts":null,"completeness":null,"signature":null,"errorDetails":null,"httpStatusCode":null`, func(t *testing.T, m Manifest) {
			if m.CorrelationID != nil || m.WaczComplete != nil || m.Signed != nil || m.Error != nil || m.HTTPStatusCode != nil {
				t.Errorf("optional members set: %+v", m)
			}
			if m.Labels == nil || len(m.Labels) != 0 {
				t.Errorf("Labels = %#v, want empty non-nil", m.Labels)
			}
		}},
		{"empty correlationId is absent", `,"correlationId":""`, func(t *testing.T, m Manifest) {
			if m.CorrelationID != nil {
				t.Errorf("CorrelationID = %q, want nil", *m.CorrelationID)
			}
		}},
		{"completeness without complete", `,"completeness":{"bodylessUrls":[]}`, func(t *testing.T, m Manifest) {
			if m.WaczComplete != nil {
				t.Errorf("WaczComplete = %v, want nil", *m.WaczComplete)
			}
		}},
		{"signature without signed", `,"signature":{"domain":"x"}`, func(t *testing.T, m Manifest) {
			if m.Signed != nil {
				t.Errorf("Signed = %v, want nil", *m.Signed)
			}
		}},
		{"complete false is kept", `,"completeness":{"complete":false},"signature":{"signed":false}`, func(t *testing.T, m Manifest) {
			if m.WaczComplete == nil || *m.WaczComplete || m.Signed == nil || *m.Signed {
				t.Errorf("WaczComplete = %v, Signed = %v, want false, false", m.WaczComplete, m.Signed)
			}
		}},
		{"httpStatusCode as proto3 string", `,"httpStatusCode":"404"`, func(t *testing.T, m Manifest) {
			if m.HTTPStatusCode == nil || *m.HTTPStatusCode != 404 {
				t.Errorf("HTTPStatusCode = %v, want 404", m.HTTPStatusCode)
			}
		}},
		{"camelCase wins over snake_case", `,"correlationId":"camel","correlation_id":"snake"`, func(t *testing.T, m Manifest) {
			if m.CorrelationID == nil || *m.CorrelationID != "camel" {
				t.Errorf("CorrelationID = %v, want camel", m.CorrelationID)
			}
		}},
		{"unknown error type is kept", `,"errorDetails":{"type":"ERROR_TYPE_QUOTA","message":"m"}`, func(t *testing.T, m Manifest) {
			if m.Error == nil || m.Error.Type != "ERROR_TYPE_QUOTA" || m.Error.Message != "m" {
				t.Errorf("Error = %+v, want type ERROR_TYPE_QUOTA", m.Error)
			}
		}},
		{"member names are case-sensitive", `,"Labels":[1],"CorrelationId":7`, func(t *testing.T, m Manifest) {
			if len(m.Labels) != 0 || m.CorrelationID != nil {
				t.Errorf("differently-cased members were read: %+v", m)
			}
		}},
		{"last duplicate wins", `,"labels":["first"],"labels":["second"]`, func(t *testing.T, m Manifest) {
			if !reflect.DeepEqual(m.Labels, []string{"second"}) {
				t.Errorf("Labels = %v, want [second]", m.Labels)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte("{" + minimal + tt.extra + "}"))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			tt.check(t, m)
		})
	}
}

func TestDecodeTaskIDCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"2B9E63EC-4F1A-4C6E-9D2B-7A51C0E8F3D4", "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4"},
		{"2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4", "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4"},
		{"00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := Decode([]byte(`{"taskId":"` + tt.in + `","status":"success","url":"u","timestamp":"2026-09-24T00:00:04Z"}`))
			if err != nil {
				t.Fatal(err)
			}
			if m.TaskID != tt.want {
				t.Errorf("TaskID = %q, want %q", m.TaskID, tt.want)
			}
		})
	}
}

func TestDecodeTimestamp(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"2026-09-24T00:00:04.210Z", "2026-09-24T00:00:04.21Z"},
		{"2026-09-24T00:00:04Z", "2026-09-24T00:00:04Z"},
		{"2026-09-24T09:00:04+09:00", "2026-09-24T00:00:04Z"},
		{"2026-09-23T19:00:04.123456789-05:00", "2026-09-24T00:00:04.123456789Z"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := Decode([]byte(`{"taskId":"2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4","status":"success","url":"u","timestamp":"` + tt.in + `"}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Timestamp.Format(time.RFC3339Nano); got != tt.want {
				t.Errorf("Timestamp = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   Status
		wantOK bool
	}{
		{"success", StatusSuccess, true},
		{"CAPTURE_STATUS_SUCCESS", StatusSuccess, true},
		{"failed", StatusFailed, true},
		{"CAPTURE_STATUS_FAILED", StatusFailed, true},
		{"timeout", StatusTimeout, true},
		{"CAPTURE_STATUS_TIMEOUT", StatusTimeout, true},
		{"httpError", StatusHTTPError, true},
		{"http_error", StatusHTTPError, true},
		{"CAPTURE_STATUS_HTTP_ERROR", StatusHTTPError, true},
		{"CAPTURE_STATUS_UNSPECIFIED", "", false},
		{"Success", "", false},
		{"cancelled", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseStatus(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseStatus(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseErrorType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want ErrorType
	}{
		{"http", ErrorTypeHTTP},
		{"ERROR_TYPE_HTTP", ErrorTypeHTTP},
		{"timeout", ErrorTypeTimeout},
		{"ERROR_TYPE_TIMEOUT", ErrorTypeTimeout},
		{"connection", ErrorTypeConnection},
		{"ERROR_TYPE_CONNECTION", ErrorTypeConnection},
		{"signing", ErrorTypeSigning},
		{"ERROR_TYPE_SIGNING", ErrorTypeSigning},
		{"internal", ErrorTypeInternal},
		{"ERROR_TYPE_INTERNAL", ErrorTypeInternal},
		{"artifact_sink", ErrorTypeArtifactSink},
		{"artifactSink", ErrorTypeArtifactSink},
		{"ERROR_TYPE_ARTIFACT_SINK", ErrorTypeArtifactSink},
		{"cancelled", ErrorTypeCancelled},
		{"ERROR_TYPE_CANCELLED", ErrorTypeCancelled},
		{"ERROR_TYPE_UNSPECIFIED", "ERROR_TYPE_UNSPECIFIED"},
		{"quota", "quota"},
		{"HTTP", "HTTP"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := ParseErrorType(tt.in); got != tt.want {
				t.Errorf("ParseErrorType(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
