// Package capture is the built-in capturer: it loads a page, records every
// HTTP exchange of the load with its body, reads the page's title, visible
// text and links, and hands pkg/wacz a wacz.Capture to write. Two engines
// sit behind one Engine interface:
//
//   - browser (the default): headless Chromium over the Chrome DevTools
//     Protocol (chromedp). It runs the page's JavaScript, so it records what
//     scripts fetch and reads the text they write.
//   - http: Go's HTTP client and an HTML/CSS parser. It runs no JavaScript:
//     what a script would fetch or write is not in its captures.
//
// Both hold every connection to the same address policy (no loopback,
// private, link-local or other non-public address unless AllowPrivate), to
// the same caps (timeout, bytes per body, bytes per page, responses per
// page), and report the same Result. Run turns a capture into BrowserHive's
// objects — `<taskId>_<correlationId>.wacz`, `.links.json` and a v12
// `.result.json` manifest — through an Uploader.
package capture
