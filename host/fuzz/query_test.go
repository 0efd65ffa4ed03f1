package fuzz

import (
	"net/url"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/route"
)

// queryFilters are the filters the list endpoints read, as one raw query
// seed (placeholders are fixtures).
const queryFilters = "Name=Fuzz&Account=superAdmin&UserId=$ADMIN&OrgId=$ORG&RoleId=$ROLE&TypeCode=fuzz_dict" +
	"&Path=/api/v1&Title=Fuzz&OperatorId=$ADMIN&GroupCode=fuzz&ExcludedGroupCodes=security,site" +
	"&ExceptionType=panic&ConfigKey=fuzz.config.key&Code=fuzz&moduleId=$MODULE&pendingLink=x"

// FuzzQueryEndpoints sends fuzzed query strings, as the super-admin, to
// every GET route: paging (Current, Size, SortField, SortOrder), time
// filters (StartTime, EndTime), a boolean sent as Enabled and Success, and
// raw extra parameters.
func FuzzQueryEndpoints(f *testing.F) {
	h := start(f)
	routes := h.routesWhere(func(r route.Route) bool { return r.Method == "GET" })
	if testing.Verbose() {
		logRoutes(f, routes)
	}
	for i := range routes {
		idx := uint16(i)
		f.Add(idx, "", "1", "20", "createTime", "desc", "2024-01-01", "2099-12-31 23:59:59", "true", queryFilters)
		if fuzzing() {
			continue
		}
		f.Add(idx, "", "", "", "", "", "", "", "", "")
		f.Add(idx, "", "0", "-1", "id", "ASC", "2024-01-01T00:00:00", "2024-01-01T00:00:00+08:00", "false", "")
		f.Add(idx, "", "9223372036854775807", "2147483647", "name; DROP TABLE sys_user--", "up", "not-a-date", "0000-00-00", "maybe", "%zz&&=&Name=%00")
		f.Add(idx, "", "9223372036854775807", "200", "", "", "", "", "", "")
		f.Add(idx, "", "4611686018427387904", "2", "", "", "", "", "", "")
		f.Add(idx, "", "2", "500", "'", "desc", "9999-99-99", "", "1", "Name=%E5%90%8D%F0%9F%99%82&Name=a&Current=1")
		f.Add(idx, "-1", "", "", "", "", "", "", "", "")
		f.Add(idx, "../../sys/user/page", "", "", "", "", "", "", "", "")
	}
	f.Fuzz(func(t *testing.T, idx uint16, param, current, size, sortField, sortOrder, startTime, endTime, flag, extra string) {
		r := pick(routes, idx)
		path := h.fill(r.Path, param)
		q := url.Values{}
		for _, p := range []struct{ name, value string }{
			{"Current", current}, {"Size", size}, {"SortField", sortField}, {"SortOrder", sortOrder},
			{"StartTime", startTime}, {"EndTime", endTime}, {"Enabled", flag}, {"Success", flag},
		} {
			if p.value != "" {
				q.Set(p.name, h.substitute(p.value))
			}
		}
		query := q.Encode()
		if extra != "" {
			query = strings.TrimPrefix(query+"&"+h.substitute(extra), "&")
		}
		rp := h.raw(t, "GET", path, query, h.adminToken(t), nil, nil)
		check(t, "GET "+path+"?"+query, key(r), rp)
	})
}
