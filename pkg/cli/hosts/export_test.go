package hosts

// Names the tests of package hosts_test reach that the package does not export.
var HostArg = hostArg
var SinceFlag = sinceFlag
