package user_test

import (
	"strings"
	"testing"
)

// TestImportCleanRowsHaveEmptyErrors: a row without errors answers
// "errors":[] (the contract's ImportRow.errors[]), never null, from the
// preview and from validate.
func TestImportCleanRowsHaveEmptyErrors(t *testing.T) {
	e := setup(t)
	content := workbook(t, importHeaders, [][]string{{"clean_a", "Clean A"}})
	r := e.expect("preview", e.upload(e.admin, "users.xlsx", content, ""), 0)
	if strings.Contains(r.Raw, `"errors":null`) || !strings.Contains(r.Raw, `"errors":[]`) {
		t.Fatalf("preview of a clean row: want \"errors\":[], got %.400s", r.Raw)
	}
	rows := []map[string]any{{"index": 2, "cells": map[string]string{"account": "clean_a", "name": "Clean A"}, "errors": []any{}}}
	r = e.expect("validate", e.do("POST", base+"/import/validate", e.admin, map[string]any{"rows": rows}), 0)
	if strings.Contains(r.Raw, `"errors":null`) || !strings.Contains(r.Raw, `"errors":[]`) {
		t.Fatalf("validate of a clean row: want \"errors\":[], got %.400s", r.Raw)
	}
}
