package fuzz

import (
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/route"
)

// validBodies are contract-valid bodies of the write routes ($NAME
// placeholders name fixtures; unquoted ones must be substituted to be JSON).
var validBodies = map[string]string{
	"POST /api/v1/sys/job":                            `{"code":"fuzz-job","name":"fuzz","handlerKind":1,"handlerName":"kernel.sessionCleanup","handlerParam":"{\"graceDays\":7}","triggerKind":1,"cronExpression":"0 0 4 * * ?","timeZone":"Asia/Shanghai","misfireStrategy":1,"concurrencyMode":1,"timeoutSeconds":60,"retryCount":0,"retryIntervalSeconds":0,"failAlertThreshold":3,"alertByNotice":false}`,
	"PUT /api/v1/sys/job/{id}":                        `{"code":"fuzz-job","name":"fuzz","handlerKind":1,"handlerName":"kernel.sessionCleanup","handlerParam":"{\"graceDays\":7}","triggerKind":1,"cronExpression":"0 0 4 * * ?","timeZone":"Asia/Shanghai","misfireStrategy":1,"concurrencyMode":1,"timeoutSeconds":60,"retryCount":0,"retryIntervalSeconds":0,"failAlertThreshold":3,"alertByNotice":false}`,
	"POST /api/v1/sys/job/batch-delete":               `{"ids":[999999999]}`,
	"POST /api/v1/sys/job/preview-cron":               `{"cron":"0 0 * * * ?","count":3,"from":"2030-01-01 00:00:00"}`,
	"POST /api/v1/sys/job/log/clear":                  `{"beforeDays":30}`,
	"POST /api/v1/auth/external/exchange":             `{"ticket":"not-a-ticket"}`,
	"POST /api/v1/auth/external/pending-link/claim":   `{"pendingLink":"not-a-link"}`,
	"POST /api/v1/auth/login":                         `{"account":"superAdmin","password":"Adm1n#Passw0rd"}`,
	"POST /api/v1/auth/refresh":                       `{"refreshToken":"not-a-refresh-token"}`,
	"POST /api/v1/auth/sms/login":                     `{"phone":"13800138000","code":"123456"}`,
	"POST /api/v1/auth/sms/send":                      `{"phone":"13800138000"}`,
	"PUT /api/v1/personal/default-module":             `{"moduleId":$MODULE}`,
	"PUT /api/v1/personal/password":                   `{"oldPassword":"Adm1n#Passw0rd","newPassword":"Adm1n#Passw0rd"}`,
	"PUT /api/v1/personal/profile":                    `{"name":"Super Admin","nickname":"sa","phone":"13800138001","email":"sa@example.com","gender":"1","avatar":null}`,
	"POST /api/v1/sys/config":                         `{"configKey":"fuzz.config.other","configValue":"v","name":"Other","groupCode":"fuzz","remark":null,"sort":2}`,
	"PUT /api/v1/sys/config/batch":                    `[{"configKey":"fuzz.config.key","configValue":"w"}]`,
	"PUT /api/v1/sys/config/{id}":                     `{"configKey":"fuzz.config.key","configValue":"x","name":"Fuzz Config","groupCode":"fuzz","sort":1}`,
	"POST /api/v1/sys/dict/item":                      `{"dictTypeCode":"fuzz_dict","label":"Two","value":"2","sort":2,"enabled":true}`,
	"POST /api/v1/sys/dict/item/batch-delete":         `{"ids":[999999999]}`,
	"PUT /api/v1/sys/dict/item/{id}":                  `{"dictTypeCode":"fuzz_dict","label":"One","value":"1","sort":1,"enabled":true}`,
	"POST /api/v1/sys/dict/type":                      `{"code":"fuzz_dict2","name":"Fuzz Dict 2","sort":1,"enabled":true,"remark":"r"}`,
	"POST /api/v1/sys/dict/type/batch-delete":         `{"ids":["999999999"]}`,
	"PUT /api/v1/sys/dict/type/{id}":                  `{"code":"fuzz_dict","name":"Fuzz Dict","sort":1}`,
	"POST /api/v1/sys/menu/add":                       `{"parentId":0,"title":"Fuzz Catalog","type":1,"sort":1,"moduleId":$MODULE,"icon":"mdi:folder"}`,
	"PUT /api/v1/sys/menu/{id}":                       `{"parentId":0,"title":"Fuzz Menu","type":2,"path":"/fuzz","component":"fuzz/index","moduleId":$MODULE,"sort":1,"visible":true,"enabled":true}`,
	"POST /api/v1/sys/module/add":                     `{"code":"fuzzmod2","title":"Fuzz Module 2","sort":1,"enabled":true,"icon":"mdi:x","apiPrefix":"/api/x","defaultRoute":"/x","remark":"r"}`,
	"PUT /api/v1/sys/module/{id}":                     `{"code":"fuzzmod","title":"Fuzz Module","sort":99}`,
	"POST /api/v1/sys/org/add":                        `{"name":"Fuzz Dept","code":"fuzz_dept","parentId":$ORG,"sort":1,"category":"dept","enabled":true}`,
	"PUT /api/v1/sys/org/{id}":                        `{"name":"Fuzz Org","code":"fuzz_org","parentId":0,"sort":1}`,
	"POST /api/v1/sys/org/{id}/copy":                  `{"name":"Fuzz Org Copy"}`,
	"POST /api/v1/sys/position/add":                   `{"name":"Fuzz Position 2","code":"fuzz_pos2","sort":1}`,
	"PUT /api/v1/sys/position/{id}":                   `{"name":"Fuzz Position","code":"fuzz_pos","sort":1,"enabled":true}`,
	"POST /api/v1/sys/role/add":                       `{"name":"Fuzz Role 2","code":"fuzz_role2","sort":1,"enabled":true,"remark":"r","isDelegatable":false}`,
	"POST /api/v1/sys/role/batch-delete":              `{"ids":[999999999]}`,
	"PUT /api/v1/sys/role/datascope":                  `{"roleId":$ROLE,"scopeType":5,"customOrgIds":[$ORG]}`,
	"PUT /api/v1/sys/role/menu":                       `{"roleId":$ROLE,"menuIds":[$MENU]}`,
	"PUT /api/v1/sys/role/users":                      `{"roleId":$ROLE,"userIds":[$USER]}`,
	"PUT /api/v1/sys/role/{id}":                       `{"name":"Fuzz Role","code":"fuzz_role","sort":1}`,
	"POST /api/v1/sys/user":                           `{"account":"fuzz2","name":"Fuzz Two","password":"Fuzz#Passw0rd2","orgId":$ORG,"positionId":$POSITION,"directorId":$ADMIN,"roleIds":[$ROLE],"phone":"13900139000","email":"f2@example.com","gender":"1","enabled":true,"forceTotp":false}`,
	"POST /api/v1/sys/user/batch-delete":              `{"ids":[999999999]}`,
	"PUT /api/v1/sys/user/{id}":                       `{"name":"Fuzz User","orgId":$ORG,"roleIds":[$ROLE],"enabled":true}`,
	"PUT /api/v1/sys/user/{id}/enabled":               `{"enabled":true}`,
	"PUT /api/v1/sys/user/{id}/password":              `{"newPassword":"Fuzz#Passw0rd9"}`,
	"POST /api/v1/auth/external/{provider}/bind":      ``,
	"POST /api/v1/auth/external/bind/complete":        `{"bindTicket":"not-a-ticket","bindingVerifier":"not-a-verifier"}`,
	"DELETE /api/v1/auth/external/{provider}/binding": ``,
}

// malformedBodies are added as seeds for every route that takes a body.
var malformedBodies = []string{
	`{`,
	`null`,
	`[]`,
	`"x"`,
	`{"a":1}{"b":2}`,
	`{"id":1e400,"sort":-9223372036854775809,"ids":[18446744073709551616]}`,
	`{"name":"\u0000\ud800 名前 🙂","code":"` + strings.Repeat("é", 300) + `"}`,
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
}

// FuzzJSONEndpoints sends fuzzed bodies, as the super-admin, to every route
// that is not a GET (POST and PUT take JSON; DELETE takes path parameters),
// with the path parameters set to the fuzzed value or, when it is empty, to
// a fixture's id.
func FuzzJSONEndpoints(f *testing.F) {
	h := start(f)
	routes := h.routesWhere(func(r route.Route) bool { return r.Method != "GET" })
	if testing.Verbose() {
		logRoutes(f, routes)
	}
	for i, r := range routes {
		body, ok := validBodies[key(r)]
		if !ok && r.Input != nil {
			// A route added since: fuzzed from an empty object until a
			// valid body is added to validBodies.
			f.Logf("no valid seed body for %s in validBodies", key(r))
			body = "{}"
		}
		param := ""
		if r.Method == "DELETE" && strings.Contains(r.Path, "{") {
			param = "999999999" // keep the fixtures for the seeds that follow
		}
		f.Add(uint16(i), param, []byte(body))
		if r.Input != nil && !fuzzing() {
			for _, m := range malformedBodies {
				f.Add(uint16(i), "", []byte(m))
			}
		}
	}
	f.Fuzz(func(t *testing.T, idx uint16, param string, body []byte) {
		r := pick(routes, idx)
		path := h.fill(r.Path, param)
		var send []byte
		if len(body) > 0 {
			send = []byte(h.substitute(string(body)))
		}
		rp := h.raw(t, r.Method, path, "", h.adminToken(t), send, nil)
		check(t, r.Method+" "+path+" "+truncate(send), key(r), rp)
		if touchesSettings(r) {
			h.restoreSettings(t)
		}
	})
}

func truncate(b []byte) string {
	const n = 300
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
