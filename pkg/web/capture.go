package web

// The capture form: a URL, an engine (the server's default first) and the
// organization it is captured for; POST /api/captures runs while the page
// shows the time it has taken, then the new archive and a link to its
// page. A refusal for capacity (429/503) says when to try again.
func init() {
	register(screen{
		Name: "capture", Pattern: "GET /capture", Nav: "navCapture", Order: 40, Title: "captureTitle", Script: true,
		Needs: func(f Features) bool { return f.Captures },
		Text: texts{
			"navCapture":        {"Capture", "キャプチャ"},
			"captureTitle":      {"Capture a page", "ページをキャプチャ"},
			"captureUrl":        {"Page URL", "ページの URL"},
			"captureEngine":     {"Engine", "エンジン"},
			"captureOrg":        {"For organization", "組織"},
			"engine_http":       {"HTTP (fast; the page's scripts do not run)", "HTTP（高速、ページのスクリプトは実行しない）"},
			"engine_browser":    {"Browser (Chromium; runs the page)", "ブラウザ（Chromium、ページを実行）"},
			"engineDefault":     {"{name} (default)", "{name}（既定）"},
			"captureButton":     {"Capture", "キャプチャする"},
			"captureWorking":    {"Capturing {url} with the {engine} engine… {s} s", "{engine} エンジンで {url} をキャプチャ中… {s} 秒"},
			"captureWaiting":    {"Waiting for the server's answer (the capture runs on the server).", "サーバーの応答を待っています（キャプチャはサーバーで実行中）。"},
			"captureDone":       {"Captured in {s} s.", "{s} 秒でキャプチャしました。"},
			"captureFailed":     {"The capture failed: {reason}", "キャプチャに失敗しました: {reason}"},
			"captureOpen":       {"Open the new archive", "新しいアーカイブを開く"},
			"captureNoOrg":      {"You belong to no organization: captures are made for an organization.", "どの組織にも属していません。キャプチャは組織のために行います。"},
			"captureNotAllowed": {"You may not capture for these organizations (ask an admin to make you a submitter).", "これらの組織ではキャプチャできません（管理者に submitter 権限を依頼してください）。"},
		},
	})
}
