package web

// The console's home: the archives the caller may view, newest first,
// with their titles, thumbnails, capture times and why each is visible;
// filters (crawl, host, dates, text) kept in the page's address; grouping
// by crawl; the crawls running now. Opening an archive asks the API for a
// replay link (checked again there) and opens it in a tab of its own.
func init() {
	// Every page's navigation names this screen: its label is a common text.
	addCommon(texts{"navArchives": {"Archives", "アーカイブ"}})
	register(screen{
		Name: "archives", Pattern: "GET /{$}", Nav: "navArchives", Order: 10, Href: "/",
		Title: "archivesTitle", Script: true,
		Text: texts{
			"archivesTitle": {"Archives", "アーカイブ"},
			"filtersLabel":  {"Filter the archives", "アーカイブを絞り込む"},
			"fText":         {"Text", "テキスト"},
			"fHost":         {"Host", "ホスト"},
			"fCrawl":        {"Crawl ID", "クロール ID"},
			"fFrom":         {"Captured from", "取得日（から）"},
			"fTo":           {"Captured to", "取得日（まで）"},
			"fGroup":        {"Group by crawl", "クロールごとにまとめる"},
			"fApply":        {"Apply", "絞り込む"},
			"fClear":        {"Clear", "解除"},
			"more":          {"Load more", "さらに読む"},
			"open":          {"Open", "開く"},
			"openHint":      {"Replay this archive in a new tab, on an origin of its own", "このアーカイブを新しいタブで、専用のオリジンでリプレイする"},
			"details":       {"Details", "詳細"},
			"incomplete":    {"incomplete", "欠けあり"},
			"truncated":     {`Stopped looking for archives you can see — "Load more" looks further`, "見えるアーカイブを探す途中で区切りました。「さらに読む」で続きを探します"},
			"empty":         {"No archives you can see", "見えるアーカイブはありません"},
			"emptyFiltered": {"No archives you can see match these filters", "この条件に合う、見えるアーカイブはありません"},
			"shown":         {"Archives shown: {n}", "{n} 件のアーカイブを表示中"},
			"replayCrawl":   {"Replay this crawl", "このクロールをリプレイ"},
			"replayCrawlHint": {"Open every archive of this crawl you may view as one collection, to click from page to page",
				"このクロールのアーカイブのうち見てよいものを 1 つのコレクションとして開き、ページからページへたどる"},
			"crawlHeading":    {"Crawl {id}", "クロール {id}"},
			"noCrawl":         {"Not from a crawl", "クロール以外の取得"},
			"crawlLink":       {"Crawl page", "クロールのページ"},
			"running":         {"Crawls running now", "実行中のクロール"},
			"runningRow":      {"{seed} — {captured} captured of {discovered} discovered", "{seed} — 発見 {discovered} 件中 {captured} 件を取得"},
			"startedBy":       {"started by {who}", "{who} が開始"},
			"whyLabel":        {"Visible because", "見える理由"},
			"orgLabel":        {"Organization", "組織"},
			"whyOrganization": {"{org}", "{org} のメンバー"},
			"whyOwner":        {"yours", "自分の取得"},
			"whyShare":        {"shared with you", "共有された"},
			"whyShareOrg":     {"shared with {org}", "{org} に共有"},
			"whyUntil":        {"{share} until {until}", "{share}（{until} まで）"},
			"capturedAt":      {"Captured", "取得日時"},
			"filterBad":       {"The filter was refused: {reason}", "絞り込みを受け付けませんでした: {reason}"},
			"archivesFooter": {"The list shows only the archives you may view. Opening one asks again, and the viewer gets a link for that archive and you alone, reading it on an origin of its own, apart from this page and from every other archive: it ends after an hour, and at once when your access is removed.",
				"一覧に出るのは見てよいアーカイブだけです。開くときにもう一度確かめ、ビューアーにはそのアーカイブだけを、あなたとして、このページとも他のアーカイブとも別のオリジンで読むリンクを渡します。リンクは 1 時間で切れ、見る権限が外れるとその場で読めなくなります。"},
		},
	})
}
