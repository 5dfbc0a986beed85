package capture

// Words are the capture command's words, for the tests.
var Words = words
