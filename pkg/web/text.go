package web

// Texts every page carries: the frame (navigation, language switch,
// identity form) and what every script says the same way.
func init() {
	addCommon(texts{
		"product":       {"capture-ledger", "capture-ledger"},
		"skip":          {"Skip to content", "本文へ移動"},
		"navLabel":      {"Main", "メイン"},
		"langSwitch":    {"日本語", "English"},
		"langSwitchTip": {"Show this console in Japanese", "このコンソールを英語で表示"},
		"subject":       {"Subject", "ユーザー"},
		"orgs":          {"Organizations", "組織"},
		"token":         {"Token", "トークン"},
		"useIdentity":   {"Use", "使う"},
		"whoLabel":      {"Who is asking", "利用者"},
		"noneNotice": {"This server accepts nobody: start it with an OIDC issuer (CAPTURE_LEDGER_OIDC_ISSUER) or, on loopback, the dev identity (CAPTURE_LEDGER_DEV_IDENTITY=1).",
			"このサーバーは誰も受け付けません。OIDC 発行者（CAPTURE_LEDGER_OIDC_ISSUER）か、ループバックでは開発用の身元（CAPTURE_LEDGER_DEV_IDENTITY=1）を設定して起動してください。"},
		"warnNames": {"The dev identity trusts whoever can reach this address: keep it on loopback.",
			"開発用の身元は、このアドレスに届く誰でも信用します。ループバックだけで使ってください。"},
		"unauthorized": {"Say who you are first (above).", "先に利用者を入力してください（上）。"},
		"gone":         {"Not found, or not yours to see.", "見つからないか、閲覧できません。"},
		"failed":       {"The server answered {n}.", "サーバーが {n} を返しました。"},
		"unavailable":  {"Temporarily unavailable: try again in {s} s.", "一時的に利用できません。{s} 秒後に再試行してください。"},
		"tooMany":      {"Too many at once: try again in {s} s.", "同時実行が多すぎます。{s} 秒後に再試行してください。"},
		// A crawl's download started, from its page or one of its archives'.
		"crawlDownloading": {"Download started: the archives of this crawl you may view, in one WACZ file.", "ダウンロードを開始しました。このクロールのうち閲覧できるアーカイブを 1 つの WACZ ファイルにまとめています。"},
		"loading":          {"Loading…", "読み込み中…"},
		"opening":          {"Opening…", "開いています…"},
		"openFailed":       {"{n} — could not open the archive", "{n} — アーカイブを開けませんでした"},
		"goneArchive":      {"This archive is not there, or you may no longer view it", "このアーカイブは無いか、もう見られません"},
		"dateLanguage":     {"en", "ja"},

		// A crawl's collection that lists only its first {n} captures ({k}
		// of them visible), from its page or a row of the archive list.
		"replayLimit": {"This crawl has more than {n} captures: the collection holds the {k} of its first {n} you may view. Download as one WACZ holds every one.",
			"このクロールの取得は {n} 件を超えています。コレクションには最初の {n} 件のうち閲覧できる {k} 件が入ります。「1 つの WACZ としてダウンロード」にはすべてが入ります。"},
		"replayLimit_one": {"This crawl has more than one capture, and its collection holds only the first. Download as one WACZ holds every one.",
			"このクロールの取得は 1 件を超えていますが、コレクションには最初の 1 件だけが入ります。「1 つの WACZ としてダウンロード」にはすべてが入ります。"},
		// A crawl's download refused for want of a place: the caller's or
		// an organization's (429), the server's (503).
		"crawlDownloadBusy": {"Another crawl download of yours or of your organization is running: try again in {s} s.", "あなたか組織の別のクロールのダウンロードが実行中です。{s} 秒後に再試行してください。"},
		"crawlDownloadFull": {"The server is running as many crawl downloads as it may: try again in {s} s.", "サーバーで実行できるクロールのダウンロードが上限に達しています。{s} 秒後に再試行してください。"},
	})
}
