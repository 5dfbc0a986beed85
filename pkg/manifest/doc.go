// Package manifest owns the reading of what the capture server (BrowserHive)
// leaves in the bucket: the per-capture result manifest (`<stem>.result.json`),
// the links file (`<stem>.links.json`) and the page list of a WACZ
// (`pages/pages.jsonl`), plus the `s3://bucket/key` locations that point at
// them.
//
// It also owns the admission decision for one manifest: whether it describes
// an archive the ledger may record (Manifest.Archive), and what the level
// report's manifestLocation means for the ledger (ManifestOutcome).
//
// Every BrowserHive manifest dialect is read: the HTTP/OpenAPI era (v1.8–v2.x,
// `"httpError"`), the protobuf-JSON era (v3–v11, `"CAPTURE_STATUS_SUCCESS"`,
// `"ERROR_TYPE_CANCELLED"`) and the Smithy/restJson1 era (v12+,
// `"http_error"`, `"cancelled"`). Status and error type are normalised to one
// spelling; unknown fields are ignored; taskId, status, url and timestamp are
// required.
//
// The package is pure: it only decodes bytes it is given and never talks to
// S3, the database or the network.
package manifest
