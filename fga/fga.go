// Package fga embeds the OpenFGA authorization model (model.fga, the source
// of truth) and its assertions (model.fga.yaml, in the OpenFGA CLI's
// store-test format) so ledgerctl can test and deploy them without files on
// disk.
package fga

import _ "embed"

// Model is the authorization model in the OpenFGA DSL (schema 1.1).
//
//go:embed model.fga
var Model string

// Tests are the model's assertions in the OpenFGA CLI store-test format.
//
//go:embed model.fga.yaml
var Tests string

// ModelFile and TestsFile are the embedded files' names; the tests refer to
// the model by ModelFile.
const (
	ModelFile = "model.fga"
	TestsFile = "model.fga.yaml"
)
