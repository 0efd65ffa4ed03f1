package captcha

import (
	"context"
	"fmt"
)

// SetAnswer replaces the answer of a pending challenge with answer, for
// tests that answer a challenge through the HTTP API (the issued answer is
// kept only as a digest and cannot be read back). The challenge keeps its
// pending-cap slot and gets a fresh TTL. An unknown or used id gives
// errcode.CaptchaExpired. Nothing in the kernel calls it.
func (s *Service) SetAnswer(ctx context.Context, id, answer string) error {
	_, slot, err := s.take(ctx, id)
	if err != nil {
		return err
	}
	if err := s.store.PutOnce(ctx, KeyPrefix+id, record(digestOf(answer), slot), s.opts.TTL); err != nil {
		return fmt.Errorf("captcha: store answer: %w", err)
	}
	return nil
}
