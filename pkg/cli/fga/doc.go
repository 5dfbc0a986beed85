// Package fga is `ledgerctl fga`: deploy and test the OpenFGA model, grant
// and revoke relationships.
package fga
