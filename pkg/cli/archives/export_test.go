package archives

// Names the tests of package archives_test reach that the package does not export.
var ArchiveTable = archiveTable
var OpenBrowser = openBrowser
