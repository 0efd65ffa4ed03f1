// Command testissuer runs the project's test OpenID provider
// (host/idp/oidc/oidctest) as a process, for the browser suite in
// e2e/browser. It listens on -addr, prints one JSON line
// {"url","clientId","clientSecret"} on standard output, and runs until it
// is signalled or its standard input is closed (so it never outlives the
// suite that started it).
//
// The authorization endpoint signs in the account named by the login query
// parameter or, without it, by the oidctest_login cookie the test sets on
// the provider's origin (so each browser context chooses its own user);
// without either it is "alice". An account the provider does not know is
// created on first use (subject sub-<login>, preferred_username <login>,
// a verified email <login>@example.test).
//
// With the oidctest_consent cookie set, the authorization endpoint first
// answers a page (a form with a #continue button, like a real provider's
// login page) and redirects back only when it is submitted: a test can then
// act while the browser waits at the provider (start a second tab, lose a
// cookie).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
)

// loginCookie names the account to sign in when the query has no login.
const loginCookie = "oidctest_login"

// consentCookie makes authorize stop at a page until it is submitted.
const consentCookie = "oidctest_consent"

// consentPage resubmits the authorization request with consent=1.
var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Test provider</title></head><body>
<h1>Test provider: sign in as {{.Login}}</h1>
<form method="get" action="/authorize">
{{range $k, $v := .Query}}<input type="hidden" name="{{$k}}" value="{{index $v 0}}">
{{end}}<input type="hidden" name="consent" value="1">
<button id="continue" type="submit">Continue</button>
</form></body></html>`))

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "testissuer:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	is, err := start(addr)
	if err != nil {
		return err
	}
	defer is.Close()
	line, err := json.Marshal(map[string]string{"url": is.URL, "clientId": is.ClientID, "clientSecret": is.ClientSecret})
	if err != nil {
		return err
	}
	if _, err := fmt.Println(string(line)); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
	return nil
}

// start starts the provider on addr with the login selection and the
// consent page in front of its authorization endpoint.
func start(addr string) (*oidctest.Issuer, error) {
	// The wrapper runs once the server is up, possibly before Start
	// returns: it reads the issuer through an atomic pointer.
	var current atomic.Pointer[oidctest.Issuer]
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if is := current.Load(); is != nil && r.Method == http.MethodGet && r.URL.Path == "/authorize" {
				selectUser(is, r)
				if consent(w, r) {
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	is, err := oidctest.Start(oidctest.Options{Addr: addr, Wrap: wrap})
	if err != nil {
		return nil, err
	}
	current.Store(is)
	return is, nil
}

// selectUser puts the chosen account into the query as login=, creating it
// when the provider does not know it yet.
func selectUser(is *oidctest.Issuer, r *http.Request) {
	q := r.URL.Query()
	login := q.Get("login")
	if login == "" {
		if c, err := r.Cookie(loginCookie); err == nil {
			login = c.Value
		}
	}
	if login == "" {
		return
	}
	if !is.HasUser(login) {
		verified := true
		is.AddUser(oidctest.User{
			Subject: "sub-" + login, PreferredUsername: login, Name: login,
			Email: login + "@example.test", EmailVerified: &verified,
		})
	}
	q.Set("login", login)
	r.URL.RawQuery = q.Encode()
}

// consent answers the consent page when the browser asked for one and the
// request is not its submission; it reports whether it did.
func consent(w http.ResponseWriter, r *http.Request) bool {
	if _, err := r.Cookie(consentCookie); err != nil || r.URL.Query().Get("consent") == "1" {
		return false
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	if err := consentPage.Execute(w, map[string]any{"Login": q.Get("login"), "Query": q}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
	return true
}
