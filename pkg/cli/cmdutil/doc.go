// Package cmdutil is what every ledgerctl command shares: the Factory
// (settings, the application, streams, questions on a terminal), exit codes
// and the errors that choose them (Classify), --as/--org (ActingAs),
// delivering the outbox before exit (Deliver), the log format of serve and
// dev demo, and the version the build sets.
package cmdutil
