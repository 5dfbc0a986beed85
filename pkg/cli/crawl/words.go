package crawl

import (
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// words are what the crawl commands (`crawl status --watch`'s drawing
// included) print for people, in English and Japanese (the console's
// words for the same things: pkg/web/crawls.go). English keeps the API's
// own words for states, stop reasons, delay sources and robots.txt
// outcomes, as --json prints them; Japanese says them in words (said).
// --json never uses these.
var words = cmdutil.Words{
	"crawlBy":         {"crawl %[1]s (%[2]s, by %[3]s)", "クロール %[1]s（%[2]s、%[3]s が開始）"},
	"stateLine":       {"state: %[1]s   stop reason: %[2]s", "状態：%[1]s   停止理由：%[2]s"},
	"pagesLine":       {"pages: %[1]d captured, %[2]d discovered (limit %[3]d, depth ≤ %[4]d)", "ページ：取得 %[1]d、発見 %[2]d（上限 %[3]d ページ、深さ %[4]d まで）"},
	"seedsLine":       {"seeds: %s", "シード：%s"},
	"ruleLine":        {"rule %d: %s", "ルール %d：%s"},
	"errorLine":       {"error: %s", "エラー：%s"},
	"searchable":      {"searchable: %[1]d of %[2]d archive(s) indexed", "検索：%[2]d 件中 %[1]d 件のアーカイブを索引済み"},
	"searchableAfter": {"; the last %s after the crawl ended", "（最後の 1 件はクロール終了の %s 後）"},
	"failedAt":        {"failed (depth %[1]d): %[2]s — %[3]s", "失敗（深さ %[1]d）：%[2]s — %[3]s"},
	"noReasonGiven":   {"no reason given", "理由の記録なし"},

	"startedEmbedded": {"crawl started; it runs on the embedded runner of a running `ledgerctl serve`, or run it here with: ledgerctl crawl run %[1]s %[2]s (or start with --wait)",
		"クロールを開始しました。実行中の `ledgerctl serve` の組み込みランナーが実行します。ここで実行するには：ledgerctl crawl run %[1]s %[2]s（または --wait を付けて開始）"},
	"startedWindmill": {"crawl started on the Windmill flow; follow it with: ledgerctl crawl status %[1]s %[2]s --watch",
		"Windmill のフローでクロールを開始しました。経過を見るには：ledgerctl crawl status %[1]s %[2]s --watch"},
	"archivesNone":  {"archives of this run: none (no page was captured)", "この実行のアーカイブ：なし（取得したページはありません）"},
	"archivesOfRun": {"archives of this run: ", "この実行のアーカイブ："},
	"stillRunning": {"stopped; crawl %[1]s is still running: `ledgerctl serve` or `ledgerctl crawl run %[1]s --as %[2]s` resumes it",
		"中断しました。クロール %[1]s は実行中のままです。`ledgerctl serve` か `ledgerctl crawl run %[1]s --as %[2]s` で再開します"},

	"ended":          {"the crawl ended (%s)", "クロールが終了しました（%s）"},
	"endedBecause":   {"the crawl ended (%[1]s, %[2]s)", "クロールが終了しました（%[1]s、%[2]s）"},
	"wasStopped":     {"the crawl was stopped", "クロールが停止されました"},
	"whyURL":         {"%s: ", "%s："},
	"whyCaptured":    {"captured", "取得済み"},
	"whyArchive":     {", archive %s", "、アーカイブ %s"},
	"whyRedirected":  {": the capture of %s was redirected here", "。%s の取得がここへリダイレクトされました"},
	"whyDepthBy":     {" (depth %[1]d; %[2]s)", "（深さ %[1]d、%[2]s）"},
	"whyFailed":      {"not captured: its capture failed: %[1]s (depth %[2]d; %[3]s)", "未取得。取得に失敗しました：%[1]s（深さ %[2]d、%[3]s）"},
	"whySkipped":     {"not captured: not fetched, %[1]s (depth %[2]d)", "未取得。取得しませんでした：%[1]s（深さ %[2]d）"},
	"whyPending":     {"not captured yet: queued at depth %[1]d (%[2]s); the crawl is running", "まだ未取得。深さ %[1]d で順番を待っています（%[2]s）。クロールは実行中です"},
	"whyNotCaptured": {"not captured: queued at depth %[1]d (%[2]s), and %[3]s before its capture", "未取得。深さ %[1]d で順番を待っていましたが（%[2]s）、取得の前に%[3]s"},
	"whyRuledOut":    {"not captured: %s", "未取得。%s"},
	"whyNotReached":  {"not captured: %[1]s would take it, but no page the crawl followed linked to it within depth %[2]d and %[3]d pages", "未取得。%[1]s の対象ですが、深さ %[2]d・%[3]d ページの範囲でたどったページからのリンクがありませんでした"},
	"soFarRunning":   {" so far; the crawl is running", "（これまでのところ）。クロールは実行中です"},
	"thenEnded":      {"; %s", "。%s"},
	"robotsDisallow": {"robots.txt disallows it", "robots.txt が禁止しています"},
	"bySeed":         {"a seed of the crawl", "クロールのシード"},
	"byNoRule":       {"no rule of the crawl matches it (a link no rule matches is skipped)", "クロールのどのルールにも一致しません（一致しないリンクは除外されます）"},
	"byRule":         {"rule %[1]d (%[2]s %[3]s)", "ルール %[1]d（%[2]s %[3]s）"},

	"colCrawl":      {"crawl", "クロール"},
	"colStarted":    {"started", "開始"},
	"colOrg":        {"org", "組織"},
	"colState":      {"state", "状態"},
	"colStop":       {"stop", "停止理由"},
	"colWacz":       {"wacz", "WACZ"},
	"colDepth":      {"depth", "深さ"},
	"colRule":       {"rule", "ルール"},
	"colAction":     {"action", "扱い"},
	"colHostname":   {"hostname", "ホスト名"},
	"colLinks":      {"links", "リンク数"},
	"colSamples":    {"samples", "例"},
	"colRobotsOut":  {"robots.txt kept out", "robots.txt による除外"},
	"colPages":      {"pages", "ページ数"},
	"noRuleMatched": {"(no rule matched)", "（一致するルールなし）"},
	"newest500":     {"only the newest 500 rows are shown", "新しい 500 行だけを表示しています"},

	"colCaptures":   {"captures", "取得数"},
	"colGaps":       {"gaps", "間隔数"},
	"colMinMs":      {"min ms", "最短 ms"},
	"colMedianMs":   {"median ms", "中央値 ms"},
	"colOverlaps":   {"overlaps", "重なり"},
	"colShort":      {"short", "間隔不足"},
	"colBackoff":    {"backoff", "待機"},
	"colURL":        {"url", "URL"},
	"colDecidedBy":  {"decided by", "決め手"},
	"colReason":     {"reason", "理由"},
	"colArchive":    {"archive", "アーカイブ"},
	"delayCapped":   {"%[1]d (cap; Crawl-delay %[2]d)", "%[1]d（上限で切った Crawl-delay %[2]d）"},
	"backoffs":      {"%[1]d× up to %[2]d", "%[1]d 回、最長 %[2]d"},
	"keptOut":       {", %d kept out", "、除外 %d"},
	"notPolite":     {"crawl %s was not polite on every host: see the overlaps and short gaps", "クロール %s はすべてのホストで礼儀正しくはありませんでした。重なりと間隔不足を見てください"},
	"noPageInState": {"no page in that state", "その状態のページはありません"},
	"seed":          {"seed", "シード"},
	"stopped":       {"crawl %s stopped", "クロール %s を停止しました"},
	"stateBecause":  {"%[1]s (%[2]s)", "%[1]s（%[2]s）"},
	"alreadyEnded":  {"crawl %[1]s had already ended: %[2]s; nothing was changed", "クロール %[1]s はすでに終了していました：%[2]s。変更はありません"},
	"notRunning":    {"crawl %s is not running; nothing was changed", "クロール %s は実行中ではありません。変更はありません"},
	"closedFailed":  {"crawl %s closed as failed", "クロール %s を失敗として終了しました"},

	"readingArchive":    {"reading archive %[1]d of %[2]d", "アーカイブを読んでいます（%[2]d 件中 %[1]d 件目）"},
	"noArchiveToExport": {"no archive of crawl %[1]s that %[2]s may view (absent, or none of its archives visible to %[2]s)", "%[2]s が見られるクロール %[1]s のアーカイブはありません（クロールがないか、どのアーカイブも %[2]s には見えません）"},
	"wroteExport":       {"wrote %[1]s: %[2]d archive(s), %[3]d page(s), %[4]d bytes (sha256 %[5]s)", "%[1]s を書きました：アーカイブ %[2]d 件、ページ %[3]d 件、%[4]d バイト（sha256 %[5]s）"},

	"watchHead":        {"crawl %[1]s · %[2]s", "クロール %[1]s · %[2]s"},
	"watchStop":        {" (%s)", "（%s）"},
	"watchLine":        {"%[1]s · level %[2]d · %[3]d captured, %[4]d discovered", "%[1]s · 深さ %[2]d · 取得 %[3]d、発見 %[4]d"},
	"levelPart":        {"%[1]d: %[2]d captured, %[3]d failed, %[4]d skipped, %[5]d %[6]s", "%[1]d：取得 %[2]d、失敗 %[3]d、スキップ %[4]d、%[6]s %[5]d"},
	"levels":           {"levels  %s", "深さ別  %s"},
	"colHost":          {"host", "ホスト"},
	"colCaptured":      {"captured", "取得"},
	"colFailed":        {"failed", "失敗"},
	"colSkipped":       {"skipped", "スキップ"},
	"colDelay":         {"delay ms", "間隔 ms"},
	"colRobots":        {"robots.txt", "robots.txt"},
	"delay":            {"%[1]d (%[2]s)", "%[1]d（%[2]s）"},
	"backedOff":        {", backed off %d", "、待機 %d"},
	"failedPages":      {"failed  %[1]d page(s): %[2]s", "失敗  %[1]d ページ：%[2]s"},
	"pending":          {"pending", "待機"},
	"notCaptured":      {"not captured", "未取得"},
	"crawlFailed":      {"crawl %[1]s failed: %[2]s", "クロール %[1]s は失敗しました：%[2]s"},
	"noReasonRecorded": {"no reason recorded", "理由の記録なし"},
}

// said is how Japanese says a word of the API's (a state, a stop reason,
// a page's state, a rule's action, a delay source, a robots.txt outcome); English says the word itself,
// and so does Japanese for a word not here.
var said = map[string]string{
	"state:running": "実行中", "state:succeeded": "成功", "state:failed": "失敗",
	"stop:completed": "完了", "stop:max_depth": "深さの上限に到達", "stop:max_pages": "ページ数の上限に到達",
	"stop:failed": "失敗", "stop:stopped": "停止",
	"source:setting": "クロールの設定", "source:crawl-delay": "robots.txt の Crawl-delay", "source:cap": "上限で切った Crawl-delay",
	"source:backoff": "待機", "source:host": "ホストの設定",
	"page:captured": "取得", "page:failed": "失敗", "page:skipped": "スキップ",
	"action:follow": "たどる", "action:capture": "取得のみ", "action:skip": "除外",
	"robots:fetched": "読み込み済み", "robots:absent": "なし", "robots:unreachable": "届かない", "robots:unparsable": "読めない", "robots:unknown": "記録なし",
}

// columns are the words of keys, a table's headings, in lang.
func columns(lang i18n.Lang, keys ...string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = words.Say(lang, k)
	}
	return out
}

// say is the API's word of kind (state, stop, source, robots) in lang.
func say(lang i18n.Lang, kind, word string) string {
	if lang == i18n.Japanese {
		if s, ok := said[kind+":"+word]; ok {
			return s
		}
	}
	return word
}
