// Package sms sends one-time SMS codes and keeps them: a Sender delivers a
// code (LogSender for development, WebhookSender for a real gateway behind an
// HTTP hook) and Codes issues, throttles and checks codes in the cache.
package sms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Sender delivers a code to a phone.
type Sender interface {
	Send(ctx context.Context, phone, code string) error
}

// Notifier is a Sender that can also deliver a notice without a code (a
// template name the gateway turns into text). Both kernel senders are
// Notifiers; the kernel sends TemplatePhoneChanged to the old phone when a
// user's phone changes.
type Notifier interface {
	Notify(ctx context.Context, phone, template string) error
}

// TemplatePhoneChanged tells the old phone that the account's phone
// number was changed.
const TemplatePhoneChanged = "phoneChanged"

// MaskPhone hides the middle of a phone number for logs and UI hints:
// 13812341234 → 138****1234. Numbers of 7 to 10 characters keep two at each
// end; shorter ones are fully masked.
func MaskPhone(phone string) string {
	r := []rune(strings.TrimSpace(phone))
	switch n := len(r); {
	case n == 0:
		return ""
	case n >= 11:
		return string(r[:3]) + "****" + string(r[n-4:])
	case n >= 7:
		return string(r[:2]) + "****" + string(r[n-2:])
	default:
		return "****"
	}
}

// LogSender is the development sender: it writes the code to the log
// instead of sending it. Never use it in production.
type LogSender struct {
	Log hclog.Logger
}

// Send logs the masked phone and the code at Warn.
func (s LogSender) Send(_ context.Context, phone, code string) error {
	log := s.Log
	if log == nil {
		log = hclog.L()
	}
	log.Warn("development SMS sender: the code is written to the log and NOT sent; configure Service:Security:Sms:Sender=Webhook for real delivery",
		"phone", MaskPhone(phone), "code", code)
	return nil
}

// Notify logs the notice at Warn (development sender).
func (s LogSender) Notify(_ context.Context, phone, template string) error {
	log := s.Log
	if log == nil {
		log = hclog.L()
	}
	log.Warn("development SMS sender: the notice is written to the log and NOT sent", "phone", MaskPhone(phone), "template", template)
	return nil
}

// Webhook defaults.
const (
	DefaultWebhookHeader   = "X-Webhook-Secret"
	DefaultWebhookTimeout  = 5 * time.Second
	DefaultWebhookTemplate = "login"
	// maxWebhookResponse caps how much of the gateway's answer is read.
	maxWebhookResponse = 64 << 10
)

// WebhookSender posts each code as JSON to a gateway URL:
//
//	POST <url>
//	Content-Type: application/json
//	<Header>: <secret>
//	{"phone":"…","code":"…","template":"login"}
//
// Notices (Notify) have an empty code and their template, e.g.
// "phoneChanged".
//
// Any 2xx answer is success. Redirects are not followed (a 3xx is a
// failure), the answer is read up to 64 KiB and discarded, and errors name
// the status or the transport failure but never the secret.
type WebhookSender struct {
	url      string
	header   string
	secret   string
	template string
	timeout  time.Duration
	client   *http.Client
}

// NewWebhookSender returns a sender posting to rawURL with the secret in
// header (default X-Webhook-Secret). client may be nil; a given client is
// copied, redirects are switched off in the copy, and its Timeout, when set,
// replaces the default 5 s bound on each call.
func NewWebhookSender(rawURL, header, secret string, client *http.Client) *WebhookSender {
	if strings.TrimSpace(header) == "" {
		header = DefaultWebhookHeader
	}
	var c http.Client
	if client != nil {
		c = *client
	}
	timeout := DefaultWebhookTimeout
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	c.Timeout = timeout
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &WebhookSender{
		url:      rawURL,
		header:   strings.TrimSpace(header),
		secret:   secret,
		template: DefaultWebhookTemplate,
		timeout:  timeout,
		client:   &c,
	}
}

type webhookBody struct {
	Phone    string `json:"phone"`
	Code     string `json:"code"`
	Template string `json:"template"`
}

// Send posts the code to the gateway.
func (s *WebhookSender) Send(ctx context.Context, phone, code string) error {
	return s.post(ctx, webhookBody{Phone: phone, Code: code, Template: s.template})
}

// Notify posts a notice without a code: {"phone":"…","code":"","template":"<template>"}.
func (s *WebhookSender) Notify(ctx context.Context, phone, template string) error {
	return s.post(ctx, webhookBody{Phone: phone, Template: template})
}

func (s *WebhookSender) post(ctx context.Context, msg webhookBody) error {
	u, err := url.Parse(s.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("sms webhook: invalid webhook URL (need an absolute http or https URL)")
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("sms webhook: encode: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return s.scrub(fmt.Errorf("sms webhook: build request: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if s.secret != "" {
		req.Header.Set(s.header, s.secret)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		// *url.Error names the URL; report the host and the cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return s.scrub(fmt.Errorf("sms webhook: post to %s: %w", u.Host, err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxWebhookResponse))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("sms webhook: %s answered HTTP %d", u.Host, resp.StatusCode)
	}
	return nil
}

// scrub removes the secret from an error message, should a transport error
// ever echo it.
func (s *WebhookSender) scrub(err error) error {
	if s.secret == "" || !strings.Contains(err.Error(), s.secret) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), s.secret, "[redacted]"))
}
