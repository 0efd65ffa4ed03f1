package vendorfake

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
)

// appAccessToken is the app token call (vendor-protocols.md §2.4, POST
// /v1.0/oauth2/accessToken, JSON {appKey, appSecret}): the app's own
// token, issued for a valid key and secret. The setup doctor uses it as
// DingTalk's harmless credentials check.
func (f *DingTalk) appAccessToken(w http.ResponseWriter, r *http.Request) {
	var body struct {
		AppKey    string `json:"appKey"`
		AppSecret string `json:"appSecret"`
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" || json.NewDecoder(r.Body).Decode(&body) != nil {
		f.fail(w, http.StatusBadRequest, "Missingbody", "body is mandatory for this action.")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if body.AppKey != f.ClientID || body.AppSecret != f.Secret {
		msg := "appkey或appsecret不合法"
		if f.EchoSecretMsg {
			msg += " appSecret=" + body.AppSecret
		}
		f.fail(w, http.StatusBadRequest, "invalidClientIdOrSecret", msg)
		return
	}
	f.seq++
	tok := f.issueLocked(fmt.Sprintf("appt0ken%04d", f.seq))
	f.answer(w, http.StatusOK, map[string]any{"accessToken": tok, "expireIn": 7200})
}
