package search

// PrintHits is printHits, for the tests.
var PrintHits = printHits

// Words are the search command's words, for the tests.
var Words = words
