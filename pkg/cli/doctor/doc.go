// Package doctor is `ledgerctl doctor`: checks every dependency and setting
// and says how to fix what fails.
package doctor
