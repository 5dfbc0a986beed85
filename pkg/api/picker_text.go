package api

import (
	"net"
	"strconv"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// pickerText is every string the picker page shows, in one language. The
// Japanese texts are the picker's original ones.
type pickerText struct {
	Title, Heading            string
	Organizations, Load       string
	Token, TokenHowTo, More   string
	FooterBefore, FooterAfter string // around <code>/wacz/<key></code>
	FooterDocs                string

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
	Incomplete   string `json:"incomplete"`
	NotASCII     string `json:"notAscii"`
	Loading      string `json:"loading"`
	Failed       string `json:"failed"`       // "{n}": the HTTP status, 0 when the request failed
	Busy         string `json:"busy"`         // 503: "{n}" seconds from Retry-After
	Truncated    string `json:"truncated"`    // the list stopped looking: load more
	Empty        string `json:"empty"`        // nothing visible
	NoOrgs       string `json:"noOrgs"`       // /api/me named no organization
	ViewingAs    string `json:"viewingAs"`    // "{subject}", "{orgs}"
	DateLanguage string `json:"dateLanguage"` // BCP 47 tag the time stamps are written in
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
		FooterBefore:  "Only the list is filtered. Reading ",
		FooterAfter:   " (replay) is not authorized. ",
		FooterDocs:    "About the picker (in Japanese)",

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
			Incomplete:   "incomplete",
			NotASCII:     "Use ASCII letters and digits for the subject and organizations (browsers cannot put other characters in headers)",
			Loading:      "Loading…",
			Failed:       "{n} — could not load the list",
			Busy:         "503 — the server is busy. Try again in {n} s.",
			Truncated:    `Stopped looking for archives you can see — "Load more" looks further`,
			Empty:        "No archives you can see",
			NoOrgs:       "no organization",
			ViewingAs:    "Viewing as {subject} ({orgs})",
			DateLanguage: "en",
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
		FooterBefore:  "絞り込まれるのは一覧だけ。",
		FooterAfter:   " の読み出し（replay）には認可が無い。",
		FooterDocs:    "picker の説明",

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
			Incomplete:   "欠けあり",
			NotASCII:     "subject と組織は半角英数字で（ブラウザはヘッダに日本語などを入れられない）",
			Loading:      "読み込み中…",
			Failed:       "{n} — 一覧を取れなかった",
			Busy:         "503 — サーバが混んでいる。{n} 秒ほど置いてからもう一度",
			Truncated:    "見えるアーカイブを探す途中で区切った —「さらに読む」で続きを探す",
			Empty:        "見えるアーカイブが無い",
			NoOrgs:       "組織なし",
			ViewingAs:    "{subject}（{orgs}）として見ている",
			DateLanguage: "ja",
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
