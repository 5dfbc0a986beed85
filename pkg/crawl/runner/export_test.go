package runner

// FetchRobots is fetchRobots, for the external tests.
var FetchRobots = fetchRobots
