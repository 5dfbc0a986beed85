package api

import (
	"net"
	"strconv"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// pickerText is every string the picker page shows, in one language. The
// Japanese texts are the picker's original ones.
type pickerText struct {
	Title, Heading          string
	Organizations, Load     string
	Token, TokenHowTo, More string
	Footer                  string // what is filtered and checked, and when
	FooterDocs              string

	// The search form: its label, button and "more" button.
	Search, SearchButton, SearchMore string

	// By view; Warn* take the listen address, TokenNotice the issuer.
	NamesPrompt, NamesUnauthorized, NamesNotice string
	NamesWarnBefore, NamesWarnAfter             string
	TokenPrompt, TokenUnauthorized              string
	TokenNoticeBefore, TokenNoticeAfter         string
	NoneNotice                                  string

	Script scriptText
}

// scriptText is what the page's script says. html/template writes it into
// the script as a JSON object; the script only ever puts these strings (and
// the API's values) into the page through textContent. {n}, {subject} and
// {orgs} are filled in by the script.
type scriptText struct {
	Incomplete string `json:"incomplete"`
	NotASCII   string `json:"notAscii"`
	Loading    string `json:"loading"`
	Failed     string `json:"failed"`    // "{n}": the HTTP status, 0 when the request failed
	Busy       string `json:"busy"`      // 503: "{n}" seconds from Retry-After
	Truncated  string `json:"truncated"` // the list stopped looking: load more
	Opening    string `json:"opening"`   // asking for a viewer link
	// ReplayCrawl is the button on a crawl's rows that replays the crawl
	// as one collection; ReplayCrawlHint its tooltip.
	ReplayCrawl     string `json:"replayCrawl"`
	ReplayCrawlHint string `json:"replayCrawlHint"`
	Gone            string `json:"gone"`         // 404 to the link: absent, or no longer viewable
	OpenFailed      string `json:"openFailed"`   // "{n}": the link's HTTP status, 0 when the request failed
	Empty           string `json:"empty"`        // nothing visible
	NoOrgs          string `json:"noOrgs"`       // /api/me named no organization
	ViewingAs       string `json:"viewingAs"`    // "{subject}", "{orgs}"
	DateLanguage    string `json:"dateLanguage"` // BCP 47 tag the time stamps are written in

	// The search's statuses. {n} and {reason} are filled in by the script.
	SearchEmpty     string `json:"searchEmpty"`     // submitted with nothing to look for
	Searching       string `json:"searching"`       // waiting for /api/search
	NoHits          string `json:"noHits"`          // no visible page matches
	HitsExact       string `json:"hitsExact"`       // "{n}": every match was counted
	HitsAtLeast     string `json:"hitsAtLeast"`     // "{n}": a lower bound (totalExact false)
	SearchTruncated string `json:"searchTruncated"` // the page stopped short: "more" looks further
	SearchBad       string `json:"searchBad"`       // 400: "{reason}" is the API's message
	SearchOff       string `json:"searchOff"`       // 404: the server has no search
	SearchFailed    string `json:"searchFailed"`    // "{n}": the HTTP status, 0 when the request failed
	Withheld        string `json:"withheld"`        // "{reason}": why the capturer kept the text out

	// Why the caller sees a row (?why=1). {org}, {share} and {until} are
	// filled in by the script.
	WhyOrganization string `json:"whyOrganization"` // "{org}": a member of the archive's organization
	WhyOwner        string `json:"whyOwner"`        // the caller asked for the capture
	WhyShare        string `json:"whyShare"`        // shared with the caller
	WhyShareOrg     string `json:"whyShareOrg"`     // "{org}": shared with one of the caller's organizations
	WhyUntil        string `json:"whyUntil"`        // "{share}" until "{until}"
}

var pickerTexts = map[i18n.Lang]pickerText{
	i18n.English: {
		Title:         "Choose an archive — capture-ledger",
		Heading:       "Choose an archive",
		Organizations: "Organizations (comma-separated)",
		Load:          "Load",
		Token:         "Token",
		TokenHowTo:    "To mint a token:",
		More:          "Load more",
		Footer:        "The list shows only the archives you may view. Opening one asks again, and the viewer gets a link for that archive and you alone, reading it on an origin of its own, apart from this page and from every other archive: it ends after an hour, and at once when your access is removed.",
		FooterDocs:    "About the picker (in Japanese)",
		Search:        "Search archived pages",
		SearchButton:  "Search",
		SearchMore:    "More results",

		NamesPrompt:       `Enter a subject and press "Load"`,
		NamesUnauthorized: "401 — no subject (this API takes the caller's name from development headers)",
		NamesNotice:       "This API takes the caller's name from development headers: it believes the subject and organizations you enter — anyone can be anyone.",
		NamesWarnBefore:   "This API listens on ",
		NamesWarnAfter:    " and believes whatever name it is given — anyone on the same network can be anyone. Listen on 127.0.0.1 (CAPTURE_LEDGER_API_HOST=127.0.0.1), or go back to JWT (CAPTURE_LEDGER_OIDC_ISSUER).",
		TokenPrompt:       `Paste a token and press "Load"`,
		TokenUnauthorized: "401 — this token is not accepted (expired, minted before the issuer restarted, or from another issuer). Get a new one and paste it.",
		TokenNoticeBefore: "This API takes the caller's name from a JWT (",
		TokenNoticeAfter:  "). Paste a token minted by that issuer.",
		NoneNotice:        "This API has no identity setting, so it can show nobody's list (everyone gets 401) — put CAPTURE_LEDGER_OIDC_ISSUER or CAPTURE_LEDGER_DEV_IDENTITY=1 in .env and restart the API.",

		Script: scriptText{
			Incomplete:      "incomplete",
			NotASCII:        "Use ASCII letters and digits for the subject and organizations (browsers cannot put other characters in headers)",
			Loading:         "Loading…",
			Failed:          "{n} — could not load the list",
			Busy:            "503 — the server is busy. Try again in {n} s.",
			Truncated:       `Stopped looking for archives you can see — "Load more" looks further`,
			Empty:           "No archives you can see",
			Opening:         "Opening…",
			ReplayCrawl:     "Replay this crawl",
			ReplayCrawlHint: "Open every archive of this crawl you may view as one collection, to click from page to page",
			Gone:            "404 — this archive is not there, or you may no longer view it",
			OpenFailed:      "{n} — could not open the archive",
			NoOrgs:          "no organization",
			ViewingAs:       "Viewing as {subject} ({orgs})",
			DateLanguage:    "en",

			SearchEmpty:     "Type the words to search for",
			Searching:       "Searching…",
			NoHits:          "No page you can see matches",
			HitsExact:       "{n} matching pages",
			HitsAtLeast:     "At least {n} matching pages",
			SearchTruncated: `Stopped looking before the page filled — "More results" looks further`,
			SearchBad:       "400 — the search was refused: {reason}",
			SearchOff:       "404 — this server has no full-text search (no index is set up)",
			SearchFailed:    "{n} — could not search",
			Withheld:        "text not kept in the archive ({reason})",

			WhyOrganization: "{org}",
			WhyOwner:        "yours",
			WhyShare:        "shared with you",
			WhyShareOrg:     "shared with {org}",
			WhyUntil:        "{share} until {until}",
		},
	},
	i18n.Japanese: {
		Title:         "アーカイブを選ぶ — capture-ledger",
		Heading:       "アーカイブを選ぶ",
		Organizations: "組織（カンマ区切り）",
		Load:          "読み込む",
		Token:         "トークン",
		TokenHowTo:    "トークンの刷り方:",
		More:          "さらに読む",
		Footer:        "一覧に出るのは見てよいアーカイブだけ。開くときにもう一度訊き、viewer にはそのアーカイブだけを、あなたとして、このページとも他のアーカイブとも別のオリジンで読むリンクを渡す —— 1 時間で切れ、見る権限が外れたらその場で読めなくなる。",
		FooterDocs:    "picker の説明",
		Search:        "保存したページを検索",
		SearchButton:  "検索",
		SearchMore:    "検索結果をさらに",

		NamesPrompt:       "subject を入れて「読み込む」",
		NamesUnauthorized: "401 — subject が空（この API は開発用ヘッダで名乗る設定）",
		NamesNotice:       "この API は開発用ヘッダで名乗る設定。入れた subject と組織をそのまま信じる —— 誰でも誰にでもなれる。",
		NamesWarnBefore:   "この API は ",
		NamesWarnAfter:    " で待ちながら、名乗りをそのまま信じる —— 同じネットワークの誰もが、誰にでもなれる。127.0.0.1 で待たせる（CAPTURE_LEDGER_API_HOST=127.0.0.1）か、JWT の設定（CAPTURE_LEDGER_OIDC_ISSUER）に戻す",
		TokenPrompt:       "トークンを貼って「読み込む」",
		TokenUnauthorized: "401 — このトークンは通らない（期限切れ・issuer を起こし直した後・別の issuer のもの）。取り直して貼る",
		TokenNoticeBefore: "この API は JWT で名乗る設定（",
		TokenNoticeAfter:  "）。その issuer が刷ったトークンを貼る",
		NoneNotice:        "この API には名乗りの設定が無く、誰の一覧も出せない（全員 401）—— .env に CAPTURE_LEDGER_OIDC_ISSUER か CAPTURE_LEDGER_DEV_IDENTITY=1 を書いて、API を起こし直す",

		Script: scriptText{
			Incomplete:      "欠けあり",
			NotASCII:        "subject と組織は半角英数字で（ブラウザはヘッダに日本語などを入れられない）",
			Loading:         "読み込み中…",
			Failed:          "{n} — 一覧を取れなかった",
			Busy:            "503 — サーバが混んでいる。{n} 秒ほど置いてからもう一度",
			Truncated:       "見えるアーカイブを探す途中で区切った —「さらに読む」で続きを探す",
			Empty:           "見えるアーカイブが無い",
			Opening:         "開いている…",
			ReplayCrawl:     "このクロールをリプレイ",
			ReplayCrawlHint: "このクロールのアーカイブのうち見てよいものを 1 つのコレクションとして開き、ページからページへたどる",
			Gone:            "404 — このアーカイブは無いか、もう見られない",
			OpenFailed:      "{n} — アーカイブを開けなかった",
			NoOrgs:          "組織なし",
			ViewingAs:       "{subject}（{orgs}）として見ている",
			DateLanguage:    "ja",

			SearchEmpty:     "探す語を入れる",
			Searching:       "検索中…",
			NoHits:          "見えるページに当たりが無い",
			HitsExact:       "{n} ページが当たった",
			HitsAtLeast:     "少なくとも {n} ページが当たった",
			SearchTruncated: "ページが埋まる前に探すのを区切った —「検索結果をさらに」で続きを探す",
			SearchBad:       "400 — 検索を受け付けなかった: {reason}",
			SearchOff:       "404 — このサーバには全文検索が無い（索引の設定が無い）",
			SearchFailed:    "{n} — 検索できなかった",
			Withheld:        "本文はアーカイブに入っていない（{reason}）",

			WhyOrganization: "{org} のメンバー",
			WhyOwner:        "自分の取得",
			WhyShare:        "共有された",
			WhyShareOrg:     "{org} に共有",
			WhyUntil:        "{share}（{until} まで）",
		},
	},
}

// textFor is the picker's text in lang (English for a language it does not
// speak).
func textFor(lang i18n.Lang) pickerText {
	if t, ok := pickerTexts[lang]; ok {
		return t
	}
	return pickerTexts[i18n.English]
}

// listenAddr is host:port as the header-mode warning names it.
func listenAddr(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
