package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNotLinksFile is the cause of every links file DecodeLinks cannot use:
// invalid JSON, JSON that is not an object, or an object without a `links`
// array. The caller skips such a file rather than failing the level.
var ErrNotLinksFile = errors.New("links: not a BrowserHive links file")

// Link is one outgoing link of a captured page, as BrowserHive extracted it.
type Link struct {
	// Href is the absolute URL (resolved against the base URL, fragment
	// kept), verbatim.
	Href string
	// Rel is the raw rel attribute ("nofollow noreferrer"); nil when the
	// anchor had none.
	Rel *string
}

// DecodeLinks reads a `.links.json` file (`{"links":[{"href","rel"?,…}],…}`)
// and returns its links in file order. Every error wraps ErrNotLinksFile.
//
// One bad item does not cost the page its other links, so items are skipped,
// not fatal, when they are not objects, when href is not a string, or when rel
// is neither a string, null nor absent (a rel we cannot read might have said
// nofollow, so the link is not followed on a guess). Strings are kept
// verbatim; filtering (scheme, fragment, nofollow, scope) is the caller's.
func DecodeLinks(data []byte) ([]Link, error) {
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrNotLinksFile)
	}
	root, ok := asObject(data)
	if !ok {
		return nil, fmt.Errorf("%w: want a JSON object, got %s", ErrNotLinksFile, jsonKind(data))
	}
	raw, ok := root["links"]
	if !ok {
		return nil, fmt.Errorf("%w: links: missing", ErrNotLinksFile)
	}
	if jsonKind(raw) != "an array" {
		return nil, fmt.Errorf("%w: links: want an array, got %s", ErrNotLinksFile, jsonKind(raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%w: links: %v", ErrNotLinksFile, err)
	}
	links := make([]Link, 0, len(items))
	for _, item := range items {
		obj, ok := asObject(item)
		if !ok {
			continue
		}
		hrefRaw, ok := obj["href"]
		if !ok {
			continue
		}
		href, ok := asString(hrefRaw)
		if !ok {
			continue
		}
		link := Link{Href: href}
		if relRaw, ok := obj["rel"]; ok && !isNull(relRaw) {
			rel, ok := asString(relRaw)
			if !ok {
				continue
			}
			link.Rel = &rel
		}
		links = append(links, link)
	}
	return links, nil
}
