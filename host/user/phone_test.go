package user_test

import (
	"fmt"
	"testing"
)

// TestPhoneUniqueAmongLiveUsers: a phone signs in by SMS, so at most one
// live user holds it: the administrator's create and update and the
// import answer 40036 PhoneTaken for a phone another live user holds (a
// deleted user's phone is free again), and the import names a phone twice
// in one file.
func TestPhoneUniqueAmongLiveUsers(t *testing.T) {
	e := setup(t)
	const phone = "13800009999"
	a, _ := e.create(e.admin, map[string]any{"account": "ph-a", "name": "A", "phone": phone})
	r := e.expect("create with a taken phone", e.do("POST", base, e.admin, map[string]any{"account": "ph-b", "name": "B", "phone": phone}), 40036)
	if r.Args["field"] != "phone" {
		t.Fatalf("40036 args %v", r.Args)
	}
	b, _ := e.create(e.admin, map[string]any{"account": "ph-b", "name": "B", "phone": "13800008888"})
	e.expect("update to a taken phone", e.do("PUT", fmt.Sprintf("%s/%d", base, b), e.admin, map[string]any{"name": "B", "phone": phone, "enabled": true}), 40036)
	e.expect("update keeping one's own phone", e.do("PUT", fmt.Sprintf("%s/%d", base, a), e.admin, map[string]any{"name": "A2", "phone": phone, "enabled": true}), 0)

	rows := []importRow{
		{Index: 2, Cells: map[string]string{"account": "ph-c", "name": "C", "phone": phone}},
		{Index: 3, Cells: map[string]string{"account": "ph-d", "name": "D", "phone": "13800007777"}},
		{Index: 4, Cells: map[string]string{"account": "ph-e", "name": "E", "phone": "13800007777"}},
	}
	var v preview
	e.expect("validate", e.do("POST", base+"/import/validate", e.admin, map[string]any{"rows": rows}), 0).Decode(t, &v)
	codes := map[int]int{}
	for _, row := range v.Rows {
		for _, ce := range row.Errors {
			if ce.ColumnKey == "phone" {
				codes[row.Index] = ce.Code
			}
		}
	}
	if codes[2] != 40036 || codes[3] != 0 || codes[4] != 46009 {
		t.Fatalf("phone cell errors by row = %v, want 2: 40036, 4: the duplicate in the file", codes)
	}

	e.expect("delete the holder", e.do("DELETE", fmt.Sprintf("%s/%d", base, a), e.admin, nil), 0)
	e.expect("update to a deleted user's phone", e.do("PUT", fmt.Sprintf("%s/%d", base, b), e.admin, map[string]any{"name": "B", "phone": phone, "enabled": true}), 0)
}
