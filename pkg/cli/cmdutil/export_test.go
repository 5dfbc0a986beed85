package cmdutil

// DeliverWords are what Deliver says, for the tests.
var DeliverWords = deliverWords
