package web

// The search screen: full-text search over the pages the caller may view,
// with the archives list's filters, results grouped by archive and the
// matches highlighted (built from text nodes and <mark> elements, never
// from the server's markup). Each URL shows once (its newest matching
// capture); its other captures are links under "N other captures".
func init() {
	// Every page's navigation names this screen: its label is a common text.
	addCommon(texts{"navSearch": {"Search", "検索"}})
	register(screen{
		Name: "search", Pattern: "GET /search", Nav: "navSearch", Order: 20,
		Title: "searchTitle", Script: true,
		Needs: func(f Features) bool { return f.Search },
		Text: texts{
			"searchTitle":           {"Search archived pages", "保存したページを検索"},
			"searchLabel":           {"Search archived pages", "保存したページを検索"},
			"searchButton":          {"Search", "検索"},
			"searchMore":            {"More results", "検索結果をさらに"},
			"fHost":                 {"Host", "ホスト"},
			"fCrawl":                {"Crawl ID", "クロール ID"},
			"fFrom":                 {"Captured from", "取得日（から）"},
			"fTo":                   {"Captured to", "取得日（まで）"},
			"searchEmpty":           {"Type the words to search for", "探す語を入力してください"},
			"searching":             {"Searching…", "検索中…"},
			"noHits":                {"No page you can see matches", "見えるページに一致するものはありません"},
			"hitsExact":             {"{n} matching pages", "{n} ページが一致しました"},
			"hitsExact_one":         {"1 matching page", "1 ページが一致しました"},
			"hitsAtLeast":           {"At least {n} matching pages", "少なくとも {n} ページが一致しました"},
			"hitsAtLeast_one":       {"At least 1 matching page", "少なくとも 1 ページが一致しました"},
			"searchTruncated":       {`Stopped looking before the page filled — "More results" looks further`, "ページが埋まる前に探すのを区切りました。「検索結果をさらに」で続きを探します"},
			"searchBad":             {"400 — the search was refused: {reason}", "400 — 検索を受け付けませんでした: {reason}"},
			"searchOff":             {"404 — this server has no full-text search (no index is set up)", "404 — このサーバーには全文検索がありません（索引が設定されていません）"},
			"searchFailed":          {"{n} — could not search", "{n} — 検索できませんでした"},
			"withheld":              {"text not kept in the archive ({reason})", "本文はアーカイブに入っていません（{reason}）"},
			"otherCaptures":         {"{n} other captures of this page", "このページの他の取得 {n} 件"},
			"otherCaptures_one":     {"1 other capture of this page", "このページの他の取得 1 件"},
			"otherCapturesMore":     {"{n} other captures of this page (and more)", "このページの他の取得 {n} 件以上"},
			"otherCapturesMore_one": {"1 other capture of this page (and more)", "このページの他の取得 1 件以上"},
			"open":                  {"Open", "開く"},
			"openHint":              {"Replay this page in a new tab, on an origin of its own", "このページを新しいタブで、専用のオリジンでリプレイする"},
			"details":               {"Details", "詳細"},
		},
	})
}
