package postgres

// RecordSources is recordSources, for the benchmark that compares it with
// and without the archives its transaction inserted.
var RecordSources = recordSources
