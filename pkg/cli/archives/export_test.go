package archives

// Names the tests of package archives_test reach that the package does not export.
var ArchiveTable = archiveTable
var OpenBrowser = openBrowser

// ListWords are archives list's words.
var ListWords = listWords
