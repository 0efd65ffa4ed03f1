package seed

// The kernel's seed rows (wire contract §4.5 and §5.2). Fixed ids below 1000
// are the idempotency anchors; consumer seed ids start at 1000.

// Menu types.
const (
	MenuCatalog = 1
	MenuPage    = 2
	MenuButton  = 3
)

// Menu is one node of the menu tree. Permission holds one or more
// permission codes joined with ";".
type Menu struct {
	ID         int64
	ParentID   int64
	Type       int
	Title      string
	Permission string
	Path       string
	Component  string
	Icon       string
	Sort       int
	ModuleID   int64 // top-level nodes only
	Hidden     bool
}

type module struct {
	id                               int64
	code, title, icon, apiPrefix, rm string
	sort                             int
}

var modules = []module{
	{1, "system", "系统", "lucide:settings", "sys", "内置系统模块，不可删除", 1},
	{2, "business", "业务中心", "lucide:briefcase-business", "biz", "示例业务模块", 2},
}

type org struct {
	id, parent           int64
	name, code, category string
	sort                 int
}

var orgs = []org{
	{1, 0, "SmartAdmin 科技", "smart", "1", 1},
	{2, 1, "总经办", "smart_gm", "2", 1},
	{3, 1, "技术部", "smart_tech", "2", 2},
	{4, 3, "前端组", "smart_fe", "3", 1},
	{5, 3, "后端组", "smart_be", "3", 2},
	{6, 1, "产品部", "smart_pm", "2", 3},
	{7, 1, "人事部", "smart_hr", "2", 4},
}

type position struct {
	id         int64
	code, name string
	sort       int
}

var positions = []position{
	{1, "gm", "总经理", 1},
	{2, "vp", "副总经理", 2},
	{3, "dm", "部门经理", 3},
	{4, "lead", "组长", 4},
	{5, "supervisor", "主管", 5},
	{6, "specialist", "专员", 6},
}

type role struct {
	id              int64
	name, code, rm  string
	sort, scopeType int
	customOrgIDs    string
}

var roles = []role{
	{1, "系统管理员", "sys_admin", "模板角色，默认不授予任何权限", 1, 0, ""},
	{2, "全部数据", "scope_all", "数据范围：全部", 2, 1, ""},
	{3, "本机构数据", "scope_org", "数据范围：本机构", 3, 2, ""},
	{4, "本机构及以下", "scope_org_children", "数据范围：本机构及以下", 4, 3, ""},
	{5, "仅本人数据", "scope_self", "数据范围：仅本人", 5, 4, ""},
	{6, "自定义范围", "scope_custom", "数据范围：自定义", 6, 5, "2,6"},
}

type dictType struct {
	id         int64
	code, name string
	items      []dictItem
}

type dictItem struct {
	id           int64
	label, value string
}

var dicts = []dictType{
	{1, "common_status", "通用状态", []dictItem{{1, "启用", "1"}, {2, "停用", "0"}}},
	{2, "org_category", "机构类别", []dictItem{{3, "公司", "1"}, {4, "部门", "2"}, {5, "小组", "3"}}},
	{3, "gender", "性别", []dictItem{{6, "男", "1"}, {7, "女", "2"}, {8, "未知", "0"}}},
}

type configRow struct {
	id                      int64
	key, value, name, group string
}

// ExternalProviderCodes are the provider codes whose enabled switch is
// seeded in the config center.
var ExternalProviderCodes = []string{"oidc", "enterprise_chat", "team_chat", "code_host", "social_chat"}

// configs are the config rows of the keys the kernel reads (the built
// areas of the sysconfig registry; host/seed/registry_test.go checks both
// directions). A key is seeded with the registry's default.
var configs = []configRow{
	{1, "sys.site.title", "AdminKernel", "站点标题", "sys"},
	{18, "sys.site.subtitle", "", "站点副标题", "sys"},
	{19, "sys.site.copyright", "AdminKernel", "版权信息", "sys"},
	{20, "sys.site.copyrightUrl", "", "版权链接", "sys"},
	{26, "sys.site.logo", "", "站点Logo", "sys"},
	{2, "sys.security.loginLock.maxFailCount", "5", "登录失败锁定次数", "security"},
	{3, "sys.security.loginLock.lockMinutes", "10", "登录锁定时长(分钟)", "security"},
	{45, "sys.security.loginLock.accountCaptchaThreshold", "20", "账号累计失败后强制验证码次数", "security"},
	{4, "sys.security.password.minLength", "8", "密码最小长度", "security"},
	{5, "sys.security.password.requireUpper", "true", "密码需含大写字母", "security"},
	{6, "sys.security.password.requireLower", "true", "密码需含小写字母", "security"},
	{7, "sys.security.password.requireDigit", "true", "密码需含数字", "security"},
	{8, "sys.security.password.requireSpecial", "false", "密码需含特殊字符", "security"},
	{22, "sys.security.password.expireDays", "0", "密码有效期(天，0不过期)", "security"},
	{25, "sys.security.password.historyCount", "0", "禁止重复使用最近密码数", "security"},
	{9, "sys.security.session.accessMinutes", "120", "访问令牌有效期(分钟)", "security"},
	{10, "sys.security.session.refreshMinutes", "10080", "刷新令牌有效期(分钟)", "security"},
	{13, "sys.security.captcha.enabled", "false", "登录验证码", "security"},
	{21, "sys.security.captcha.type", "char", "验证码类型", "security"},
	{24, "sys.security.smsLogin.enabled", "false", "短信验证码登录", "security"},
	{23, "sys.security.mfa.enabled", "false", "短信二次验证", "security"},
	{14, "sys.security.rateLimit.enabled", "true", "接口限流", "security"},
	{15, "sys.security.rateLimit.windowSeconds", "60", "限流窗口(秒)", "security"},
	{16, "sys.security.rateLimit.permitPerWindow", "300", "每窗口请求上限", "security"},
	{17, "sys.security.rateLimit.authPermitPerWindow", "1200", "认证接口每窗口请求上限", "security"},
	{53, "sys.security.rateLimit.passwordPermitPerWindow", "60", "密码尝试每窗口请求上限", "security"},
	{31, "sys.externalauth.enterprise_chat.enabled", "true", "企业聊天登录", "externalauth"},
	{32, "sys.externalauth.team_chat.enabled", "true", "团队聊天登录", "externalauth"},
	{33, "sys.externalauth.code_host.enabled", "true", "代码托管登录", "externalauth"},
	{34, "sys.externalauth.social_chat.enabled", "true", "社交聊天登录", "externalauth"},
	{35, "sys.externalauth.oidc.enabled", "true", "OIDC 单点登录", "externalauth"},
	{36, "sys.externalauth.enterprise_chat.linkByAccount", "false", "企业聊天按账号自动关联", "externalauth"},
	{29, "sys.security.totp.enabled", "false", "TOTP 二次验证", "security"},
	{30, "sys.security.totp.requireForSuperAdmin", "false", "超级管理员强制 TOTP", "security"},
	{46, "sys.security.passkey.passwordless", "false", "通行密钥免密登录", "security"},
	{50, "sys.realtime.maxConnectionsPerUser", "5", "每用户实时连接上限", "realtime"},
	{27, "sys.job.logRetentionDays", "30", "任务日志保留天数", "job"},
	{54, "sys.job.logRetentionFloorDays", "30", "日志保留天数下限", "job"},
	{28, "sys.job.alertEmails", "", "任务告警邮箱", "job"},
	{11, "sys.upload.maxSizeMb", "20", "上传大小上限(MB)", "upload"},
	{12, "sys.upload.allowedExtensions", ".jpg,.png,.pdf,.xlsx,.docx,.zip", "允许上传的扩展名", "upload"},
	{51, "sys.import.maxRows", "10000", "导入行数上限", "upload"},
	{52, "sys.export.maxRows", "100000", "导出行数上限", "upload"},
}

// formerlyRetired are the ids of configs rows that older releases
// soft-deleted at every start while their area was not built (the captcha
// type, MFA, TOTP, upload and job keys); every one is built now, and
// syncConfigs revives such a row (same id, default value) instead of
// inserting one.
var formerlyRetired = map[int64]bool{21: true, 23: true, 29: true, 30: true, 27: true, 28: true, 11: true, 12: true}

// kernelMenus is the menu tree for the areas the kernel implements. It grows
// as areas land; every permission code here names a real route (a test
// checks both directions once permission-gated routes exist).
var kernelMenus = []Menu{
	{ID: 100, Type: MenuPage, Title: "工作台", Path: "/workbench", Component: "dashboard/workbench", Icon: "lucide:layout-dashboard", Sort: 1, ModuleID: 1},
	{ID: 110, Type: MenuPage, Title: "工作台", Path: "/business/workbench", Component: "dashboard/biz", Icon: "lucide:layout-dashboard", Sort: 1, ModuleID: 2},

	{ID: 300, Type: MenuCatalog, Title: "系统运维", Icon: "ph:gear-six-duotone", Sort: 3, ModuleID: 1},
	{ID: 301, ParentID: 300, Type: MenuButton, Title: "连通性探针", Permission: "GET:/api/v1/ping", Sort: 1},

	{ID: 400, Type: MenuCatalog, Title: "任务调度", Icon: "ph:clock-clockwise-duotone", Sort: 4, ModuleID: 1},
	{ID: 410, ParentID: 400, Type: MenuPage, Title: "定时任务", Path: "/system/job", Component: "system/job/index", Icon: "ph:timer-duotone", Sort: 1},
	{ID: 411, ParentID: 410, Type: MenuButton, Title: "定时任务-查询", Permission: "GET:/api/v1/sys/job/page;GET:/api/v1/sys/job/handlers", Sort: 1},
	{ID: 412, ParentID: 410, Type: MenuButton, Title: "定时任务-新增", Permission: "POST:/api/v1/sys/job", Sort: 2},
	{ID: 413, ParentID: 410, Type: MenuButton, Title: "定时任务-修改", Permission: "PUT:/api/v1/sys/job/{id}", Sort: 3},
	{ID: 414, ParentID: 410, Type: MenuButton, Title: "定时任务-删除", Permission: "DELETE:/api/v1/sys/job/{id};POST:/api/v1/sys/job/batch-delete", Sort: 4},
	{ID: 415, ParentID: 410, Type: MenuButton, Title: "定时任务-启停", Permission: "PUT:/api/v1/sys/job/{id}/enabled", Sort: 5},
	{ID: 416, ParentID: 410, Type: MenuButton, Title: "定时任务-执行", Permission: "POST:/api/v1/sys/job/{id}/run", Sort: 6},
	{ID: 420, ParentID: 400, Type: MenuPage, Title: "执行记录", Path: "/system/job-log", Component: "system/job-log/index", Icon: "ph:list-checks-duotone", Sort: 2},
	{ID: 421, ParentID: 420, Type: MenuButton, Title: "执行记录-查询", Permission: "GET:/api/v1/sys/job/log/page", Sort: 1},
	{ID: 425, ParentID: 420, Type: MenuButton, Title: "执行记录-终止", Permission: "POST:/api/v1/sys/job/log/{id}/kill", Sort: 5},
	{ID: 426, ParentID: 420, Type: MenuButton, Title: "执行记录-清理", Permission: "POST:/api/v1/sys/job/log/clear", Sort: 6},
	{ID: 430, ParentID: 400, Type: MenuPage, Title: "任务监控", Path: "/system/job-monitor", Component: "system/job-monitor/index", Icon: "ph:chart-line-duotone", Sort: 3},
	{ID: 431, ParentID: 430, Type: MenuButton, Title: "任务监控-查询", Permission: "GET:/api/v1/sys/job/dashboard", Sort: 1},

	{ID: 500, Type: MenuCatalog, Title: "日志审计", Icon: "ph:notebook-duotone", Sort: 5, ModuleID: 1},
	{ID: 510, ParentID: 500, Type: MenuPage, Title: "登录日志", Path: "/system/log/login", Component: "system/log/login/index", Icon: "ph:sign-in-duotone", Sort: 1},
	{ID: 511, ParentID: 510, Type: MenuButton, Title: "登录日志-查询", Permission: "GET:/api/v1/sys/log/login/page", Sort: 1},
	{ID: 515, ParentID: 510, Type: MenuButton, Title: "登录日志-清空", Permission: "DELETE:/api/v1/sys/log/login", Sort: 5},
	{ID: 540, ParentID: 500, Type: MenuPage, Title: "在线会话", Path: "/system/session", Component: "system/session/index", Icon: "ph:users-three-duotone", Sort: 4},
	{ID: 541, ParentID: 540, Type: MenuButton, Title: "在线会话-查询", Permission: "GET:/api/v1/sys/session/online", Sort: 1},
	{ID: 545, ParentID: 540, Type: MenuButton, Title: "在线会话-强制下线", Permission: "DELETE:/api/v1/sys/session/{sessionid}", Sort: 5},

	{ID: 600, Type: MenuCatalog, Title: "文件管理", Icon: "ph:folder-duotone", Sort: 6, ModuleID: 1},
	{ID: 610, ParentID: 600, Type: MenuPage, Title: "文件管理", Path: "/system/file", Component: "system/file/index", Icon: "ph:file-duotone", Sort: 1},
	{ID: 611, ParentID: 610, Type: MenuButton, Title: "文件-查询", Permission: "GET:/api/v1/sys/file/page", Sort: 1},
	{ID: 612, ParentID: 610, Type: MenuButton, Title: "文件-上传", Permission: "POST:/api/v1/sys/file/upload;POST:/api/v1/sys/file/chunk/init;POST:/api/v1/sys/file/chunk;POST:/api/v1/sys/file/chunk/complete", Sort: 2},
	{ID: 614, ParentID: 610, Type: MenuButton, Title: "文件-删除", Permission: "DELETE:/api/v1/sys/file/{id};POST:/api/v1/sys/file/batch-delete", Sort: 4},
	{ID: 615, ParentID: 610, Type: MenuButton, Title: "文件-下载", Permission: "GET:/api/v1/sys/file/{id}/download", Sort: 5},
}

// ConfigSeed is a seeded config row as the settings reference shows it.
type ConfigSeed struct {
	ID               int64
	Key, Name, Group string
}

// ConfigSeeds returns the seeded config rows (id, key, Chinese name and
// group), in seeding order.
func ConfigSeeds() []ConfigSeed {
	out := make([]ConfigSeed, len(configs))
	for i, c := range configs {
		out[i] = ConfigSeed{ID: c.id, Key: c.key, Name: c.name, Group: c.group}
	}
	return out
}
