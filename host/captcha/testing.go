package captcha

import (
	"context"
	"fmt"

	"github.com/adminkernel/kernel/host/errcode"
)

// SetAnswer replaces the answer of a pending challenge with answer, for
// tests that answer a challenge through the HTTP API (the issued answer is
// kept only as a digest and cannot be read back). The challenge keeps its
// pending-cap slot and gets a fresh TTL. An unknown or used id gives
// errcode.CaptchaExpired. Nothing in the kernel calls it.
func (s *Service) SetAnswer(ctx context.Context, id, answer string) error {
	if !validID(id) {
		return errcode.New(errcode.CaptchaExpired)
	}
	stored, ok, err := s.store.Take(ctx, KeyPrefix+id)
	if err != nil {
		return fmt.Errorf("captcha: take answer: %w", err)
	}
	if !ok {
		return errcode.New(errcode.CaptchaExpired)
	}
	_, slot := parseRecord(stored)
	if err := s.store.PutOnce(ctx, KeyPrefix+id, record(digestOf(answer), slot), s.opts.TTL); err != nil {
		return fmt.Errorf("captcha: store answer: %w", err)
	}
	return nil
}
