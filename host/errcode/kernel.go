// The kernel code table follows the wire contract (§5.1) plus the codes this
// kernel adds: 40028-40038, 41006-41007, 42031-42032, 42035-42036, 44007-44008, 45005-45006, 46014-46015, 47015-47016, 48002-48006 and 50001-50003 (see
// docs/reference/compatibility.md and docs/design/security.md).

package errcode

// Kernel codes, by segment: 0 success; 40xxx authentication and login;
// 41xxx permissions and data scope; 42xxx user, org, role, menu; 43xxx
// dictionary and config; 44xxx files; 45xxx notifications; 46xxx import and
// export; 47xxx jobs; 48xxx request parameters; 50xxx internal errors.
// Consumer codes start at 60000 by convention.
const (
	Success               Code = 0
	PasswordWrong         Code = 40001
	CaptchaExpired        Code = 40002
	CaptchaWrong          Code = 40003
	AccountLocked         Code = 40004
	AccountDisabled       Code = 40005
	TokenInvalid          Code = 40006
	RefreshTokenInvalid   Code = 40007
	TooManyRequests       Code = 40008
	SmsCodeRequired       Code = 40009
	SmsCodeWrong          Code = 40010
	SmsCodeExpired        Code = 40011
	SmsLoginDisabled      Code = 40012
	OAuthProviderDisabled Code = 40013
	OAuthStateInvalid     Code = 40014
	OAuthExchangeFailed   Code = 40015
	OAuthAccountNotBound  Code = 40016
	OAuthAlreadyBound     Code = 40017
	TotpRequired          Code = 40018
	TotpWrong             Code = 40019
	TotpNotBound          Code = 40020
	MfaBindInvalid        Code = 40021
	// BindInviteInvalid is an alias of MfaBindInvalid; the catalog lists only MfaBindInvalid.
	BindInviteInvalid            = MfaBindInvalid
	RecoveryCodeInvalid     Code = 40022
	CsrfInvalid             Code = 40023
	ReauthRequired          Code = 40024
	MfaBindPasswordRequired Code = 40026
	ApiKeyInvalid           Code = 40027
	// PasswordChangeRequired: the session's account must change its
	// password first (mustChangePassword); only the password change, the
	// profile and logout answer until then. HTTP 403.
	PasswordChangeRequired Code = 40028
	// CaptchaRequired: this account has had too many failed logins from
	// many clients; a captcha answer is required for it. HTTP 200.
	CaptchaRequired Code = 40029
	// Passkeys (WebAuthn, kernel-added): PasskeyInvalid, a registration or
	// assertion that fails verification (unknown credential, wrong origin
	// or RP id, no user verification, sign counter going back = a cloned
	// authenticator); PasskeyDisabled, passwordless login switched off or
	// no relying party configured; PasskeyCeremonyInvalid, an unknown,
	// expired or spent ceremony; PasskeyNotFound, a passkey that is not
	// the caller's; PasskeyExists, a credential already registered.
	PasskeyInvalid         Code = 40030
	PasskeyDisabled        Code = 40031
	PasskeyCeremonyInvalid Code = 40032
	PasskeyNotFound        Code = 40033
	PasskeyExists          Code = 40034
	// MfaEnrolSessionRequired: the password-only TOTP binding
	// (POST /auth/mfa/bind/start) is refused to an account that already
	// has a second factor (a passkey, or a phone under the SMS second
	// factor): a new factor is added from a signed-in session with a
	// re-authentication window (POST /personal/mfa/bind/start). HTTP 200.
	MfaEnrolSessionRequired Code = 40035
	// PhoneTaken: the phone number is held by another live user (a phone
	// signs in by SMS, so it names one account). HTTP 200.
	PhoneTaken Code = 40036
	// ProviderNotFound: the external-login setup doctor was asked about a
	// code the provider registry does not hold (neither registered nor
	// recorded). Was 42033 before it joined the external-login codes.
	ProviderNotFound Code = 40037
	// ProviderDoctorBusy: a setup doctor run for this provider (or too
	// many runs at once) is under way; try again when it ends. Was 42034.
	ProviderDoctorBusy Code = 40038
	NoPermission       Code = 41001
	DemoModeReadOnly   Code = 41002
	SuperAdminRequired Code = 41003
	RoleNotDelegatable Code = 41004
	UserOutOfDataScope Code = 41005
	// AuthorityExceeded: the target user holds permission codes or a data
	// scope beyond the caller's own, or a grant would give more than the
	// caller holds. Only the super-admin passes.
	AuthorityExceeded Code = 41006
	// AreaPermissionRequired: an action on another area's rows (a recycle
	// bin restore or purge) also needs that area's own write code, which
	// the caller does not hold (arg code).
	AreaPermissionRequired Code = 41007
	UserNotFound           Code = 42001
	RoleNotFound           Code = 42002
	OrgNotFound            Code = 42003
	OrgHasChildren         Code = 42004
	PositionNotFound       Code = 42005
	AccountExists          Code = 42006
	SuperAdminProtected    Code = 42007
	OrgInvalidParent       Code = 42008
	OrgCodeExists          Code = 42009
	PositionCodeExists     Code = 42010
	ModuleNotFound         Code = 42011
	ModuleCodeExists       Code = 42012
	ModuleProtected        Code = 42013
	ModuleAccessDenied     Code = 42014
	MenuNotFound           Code = 42015
	MenuHasChildren        Code = 42016
	MenuInvalidParent      Code = 42017
	RoleCodeExists         Code = 42018
	PasswordTooWeak        Code = 42019
	RecycleNotFound        Code = 42020
	RecycleUniqueConflict  Code = 42021
	RecycleInvalidType     Code = 42022
	ModuleHasMenus         Code = 42023
	SessionNotFound        Code = 42024
	PasswordReused         Code = 42025
	AvatarUrlInvalid       Code = 42026
	OrgHasUsers            Code = 42027
	PositionHasUsers       Code = 42028
	CannotOperateSelf      Code = 42029
	OrgOutOfScope          Code = 42030
	// MenuPermissionInvalid: a menu's permission string is not a
	// permission code of the route table.
	MenuPermissionInvalid Code = 42031
	// RecycleParentDeleted: a recycle-bin restore of a child (org, menu,
	// dict item, user) whose parent (org, menu or module, dict type, org)
	// is deleted or gone: restore the parent first.
	RecycleParentDeleted Code = 42032
	// ResourceNotFound: a business resource's row (host/resource) that
	// does not exist, is deleted or is outside the caller's data scope
	// (args resource, id).
	ResourceNotFound Code = 42035
	// ResourceKeyExists: a live row of a business resource already holds
	// the value of a unique field (args resource, field).
	ResourceKeyExists   Code = 42036
	DictTypeNotFound    Code = 43001
	DictTypeCodeExists  Code = 43002
	DictItemNotFound    Code = 43003
	ConfigNotFound      Code = 43004
	ConfigKeyExists     Code = 43005
	SeedDataProtected   Code = 43010
	DictItemValueExists Code = 43011
	ConfigValueInvalid  Code = 43012 // args key, expected (sysconfig registry)
	ConfigKeyUnknown    Code = 43013 // args key: a sys.* key the registry does not name
	FileEmpty           Code = 44001
	FileTooLarge        Code = 44002
	FileExtNotAllowed   Code = 44003
	FileNotFound        Code = 44004
	ChunkMissing        Code = 44005
	ChunkHashMismatch   Code = 44006
	// ChunkTooLarge: a chunk over the upload's chunk size (args max, in
	// bytes), or a chunk/init whose chunkCount would need chunks over the
	// largest chunk size.
	ChunkTooLarge Code = 44007
	// UploadPendingExceeded: the caller's unfinished chunked uploads
	// would hold more than Service:Upload:PendingMaxMb (args max, in MB).
	UploadPendingExceeded  Code = 44008
	NoticeNotFound         Code = 45001
	NoticeReceiverRequired Code = 45002
	NoticeReceiverNotFound Code = 45003
	NoticeActionInvalid    Code = 45004
	// NoticeOutOfDataScope: the notice's publisher is outside the
	// caller's data scope.
	NoticeOutOfDataScope Code = 45005
	// NoticeActionNotPermitted: a notice action calls an API route whose
	// permission code the publisher does not hold (args method, path).
	NoticeActionNotPermitted Code = 45006
	ExcelProviderMissing     Code = 46001
	ImportFileEmpty          Code = 46002
	ImportRowLimitExceeded   Code = 46003
	ImportColumnMissing      Code = 46004
	ImportCellRequired       Code = 46005
	ImportCellDictInvalid    Code = 46006
	ImportCellRefNotFound    Code = 46007
	ImportCellFormatInvalid  Code = 46008
	ImportDuplicateInFile    Code = 46009
	ImportDuplicateInDb      Code = 46010
	ImportOrgOutOfScope      Code = 46011
	ExportRowLimitExceeded   Code = 46012
	ExportColumnInvalid      Code = 46013
	ImportCellTooLarge       Code = 46014 // args row, column, max (or sharedString, max): a cell above 32 767 characters
	ImportWorkbookTooLarge   Code = 46015 // args what, max: a workbook over one of host/spreadsheet's caps
	JobNotFound              Code = 47001
	JobCodeExists            Code = 47002
	JobCronInvalid           Code = 47003
	JobTriggerInvalid        Code = 47004
	JobHandlerNotFound       Code = 47005
	JobAlreadyRunning        Code = 47006
	JobRunNotAlive           Code = 47007
	JobSqlDisabled           Code = 47008
	JobHttpUrlBlocked        Code = 47009
	JobStatusConflict        Code = 47010
	JobPropsInvalid          Code = 47011
	JobLogNotFound           Code = 47012
	JobRunLimitReached       Code = 47013
	JobProtected             Code = 47014
	// JobSystemBounds: a system job's property is outside the bounds a
	// system job keeps (arg field).
	JobSystemBounds Code = 47015
	// JobRetentionBelowFloor: a log retention below
	// sys.job.logRetentionFloorDays (arg floor).
	JobRetentionBelowFloor Code = 47016
	PageSizeExceeded       Code = 48001
	RequestInvalid         Code = 48002
	RouteNotFound          Code = 48003
	MethodNotAllowed       Code = 48004
	BodyTooLarge           Code = 48005
	// UnsupportedMediaType: a JSON endpoint got a body of another
	// Content-Type. HTTP 415.
	UnsupportedMediaType Code = 48006
	SystemError          Code = 50000
	// StorageFull: the database refused a write because its storage is
	// full (SQLite SQLITE_FULL, PostgreSQL 53100 disk_full, MySQL 1021 /
	// 1114). Answered with HTTP 503; the write did not happen.
	StorageFull Code = 50001
	// CacheUnavailable: the cache (Redis) could not be reached (refused,
	// timed out, closed, loading). HTTP 503 with Retry-After.
	CacheUnavailable Code = 50002
	// DatabaseUnavailable: the database could not be reached (refused,
	// connection lost, shutting down, too many connections). HTTP 503 with
	// Retry-After.
	DatabaseUnavailable Code = 50003
)

// KernelEnumName is the source name of the kernel's own codes.
const KernelEnumName = "ErrorCode"

// Kernel is the kernel's enumeration of codes with their msgKeys.
var Kernel = Enum{Name: KernelEnumName, Members: []Member{
	{Success, "Success", "common.success"},
	{PasswordWrong, "PasswordWrong", "error.auth.passwordWrong"},
	{CaptchaExpired, "CaptchaExpired", "error.auth.captchaExpired"},
	{CaptchaWrong, "CaptchaWrong", "error.auth.captchaWrong"},
	{AccountLocked, "AccountLocked", "error.auth.accountLocked"},
	{AccountDisabled, "AccountDisabled", "error.auth.accountDisabled"},
	{TokenInvalid, "TokenInvalid", "error.auth.tokenInvalid"},
	{RefreshTokenInvalid, "RefreshTokenInvalid", "error.auth.refreshTokenInvalid"},
	{TooManyRequests, "TooManyRequests", "error.auth.tooManyRequests"},
	{SmsCodeRequired, "SmsCodeRequired", "error.auth.smsCodeRequired"},
	{SmsCodeWrong, "SmsCodeWrong", "error.auth.smsCodeWrong"},
	{SmsCodeExpired, "SmsCodeExpired", "error.auth.smsCodeExpired"},
	{SmsLoginDisabled, "SmsLoginDisabled", "error.auth.smsLoginDisabled"},
	{OAuthProviderDisabled, "OAuthProviderDisabled", "error.auth.oauthProviderDisabled"},
	{OAuthStateInvalid, "OAuthStateInvalid", "error.auth.oauthStateInvalid"},
	{OAuthExchangeFailed, "OAuthExchangeFailed", "error.auth.oauthExchangeFailed"},
	{OAuthAccountNotBound, "OAuthAccountNotBound", "error.auth.oauthAccountNotBound"},
	{OAuthAlreadyBound, "OAuthAlreadyBound", "error.auth.oauthAlreadyBound"},
	{TotpRequired, "TotpRequired", "error.auth.totpRequired"},
	{TotpWrong, "TotpWrong", "error.auth.totpWrong"},
	{TotpNotBound, "TotpNotBound", "error.auth.totpNotBound"},
	{MfaBindInvalid, "MfaBindInvalid", "error.auth.mfaBindInvalid"},
	{RecoveryCodeInvalid, "RecoveryCodeInvalid", "error.auth.recoveryCodeInvalid"},
	{CsrfInvalid, "CsrfInvalid", "error.auth.csrfInvalid"},
	{ReauthRequired, "ReauthRequired", "error.auth.reauthRequired"},
	{MfaBindPasswordRequired, "MfaBindPasswordRequired", "error.auth.mfaBindPasswordRequired"},
	{ApiKeyInvalid, "ApiKeyInvalid", "error.auth.apiKeyInvalid"},
	{PasswordChangeRequired, "PasswordChangeRequired", "error.auth.passwordChangeRequired"},
	{CaptchaRequired, "CaptchaRequired", "error.auth.captchaRequired"},
	{PasskeyInvalid, "PasskeyInvalid", "error.auth.passkeyInvalid"},
	{PasskeyDisabled, "PasskeyDisabled", "error.auth.passkeyDisabled"},
	{PasskeyCeremonyInvalid, "PasskeyCeremonyInvalid", "error.auth.passkeyCeremonyInvalid"},
	{PasskeyNotFound, "PasskeyNotFound", "error.auth.passkeyNotFound"},
	{PasskeyExists, "PasskeyExists", "error.auth.passkeyExists"},
	{MfaEnrolSessionRequired, "MfaEnrolSessionRequired", "error.auth.mfaEnrolSessionRequired"},
	{PhoneTaken, "PhoneTaken", "error.auth.phoneTaken"},
	{ProviderNotFound, "ProviderNotFound", "error.provider.notFound"},
	{ProviderDoctorBusy, "ProviderDoctorBusy", "error.provider.doctorBusy"},
	{NoPermission, "NoPermission", "error.perm.denied"},
	{DemoModeReadOnly, "DemoModeReadOnly", "error.perm.demoReadOnly"},
	{SuperAdminRequired, "SuperAdminRequired", "error.perm.superAdminRequired"},
	{RoleNotDelegatable, "RoleNotDelegatable", "error.role.notDelegatable"},
	{UserOutOfDataScope, "UserOutOfDataScope", "error.user.outOfDataScope"},
	{AuthorityExceeded, "AuthorityExceeded", "error.perm.authorityExceeded"},
	{AreaPermissionRequired, "AreaPermissionRequired", "error.perm.areaPermissionRequired"},
	{UserNotFound, "UserNotFound", "error.user.notFound"},
	{RoleNotFound, "RoleNotFound", "error.role.notFound"},
	{OrgNotFound, "OrgNotFound", "error.org.notFound"},
	{OrgHasChildren, "OrgHasChildren", "error.org.hasChildren"},
	{PositionNotFound, "PositionNotFound", "error.position.notFound"},
	{AccountExists, "AccountExists", "error.user.accountExists"},
	{SuperAdminProtected, "SuperAdminProtected", "error.user.superAdminProtected"},
	{OrgInvalidParent, "OrgInvalidParent", "error.org.invalidParent"},
	{OrgCodeExists, "OrgCodeExists", "error.org.codeExists"},
	{PositionCodeExists, "PositionCodeExists", "error.position.codeExists"},
	{ModuleNotFound, "ModuleNotFound", "error.module.notFound"},
	{ModuleCodeExists, "ModuleCodeExists", "error.module.codeExists"},
	{ModuleProtected, "ModuleProtected", "error.module.protected"},
	{ModuleAccessDenied, "ModuleAccessDenied", "error.module.accessDenied"},
	{MenuNotFound, "MenuNotFound", "error.menu.notFound"},
	{MenuHasChildren, "MenuHasChildren", "error.menu.hasChildren"},
	{MenuInvalidParent, "MenuInvalidParent", "error.menu.invalidParent"},
	{RoleCodeExists, "RoleCodeExists", "error.role.codeExists"},
	{PasswordTooWeak, "PasswordTooWeak", "error.user.passwordTooWeak"},
	{RecycleNotFound, "RecycleNotFound", "error.recycle.notFound"},
	{RecycleUniqueConflict, "RecycleUniqueConflict", "error.recycle.uniqueConflict"},
	{RecycleInvalidType, "RecycleInvalidType", "error.recycle.invalidType"},
	{ModuleHasMenus, "ModuleHasMenus", "error.module.hasMenus"},
	{SessionNotFound, "SessionNotFound", "error.session.notFound"},
	{PasswordReused, "PasswordReused", "error.user.passwordReused"},
	{AvatarUrlInvalid, "AvatarUrlInvalid", "error.user.avatarUrlInvalid"},
	{OrgHasUsers, "OrgHasUsers", "error.org.hasUsers"},
	{PositionHasUsers, "PositionHasUsers", "error.position.hasUsers"},
	{CannotOperateSelf, "CannotOperateSelf", "error.user.cannotOperateSelf"},
	{OrgOutOfScope, "OrgOutOfScope", "error.org.outOfScope"},
	{MenuPermissionInvalid, "MenuPermissionInvalid", "error.menu.permissionInvalid"},
	{RecycleParentDeleted, "RecycleParentDeleted", "error.recycle.parentDeleted"},
	{ResourceNotFound, "ResourceNotFound", "error.resource.notFound"},
	{ResourceKeyExists, "ResourceKeyExists", "error.resource.keyExists"},
	{DictTypeNotFound, "DictTypeNotFound", "error.dict.typeNotFound"},
	{DictTypeCodeExists, "DictTypeCodeExists", "error.dict.typeCodeExists"},
	{DictItemNotFound, "DictItemNotFound", "error.dict.itemNotFound"},
	{ConfigNotFound, "ConfigNotFound", "error.config.notFound"},
	{ConfigKeyExists, "ConfigKeyExists", "error.config.keyExists"},
	{SeedDataProtected, "SeedDataProtected", "error.dict.seedProtected"},
	{DictItemValueExists, "DictItemValueExists", "error.dict.itemValueExists"},
	{ConfigValueInvalid, "ConfigValueInvalid", "error.config.valueInvalid"},
	{ConfigKeyUnknown, "ConfigKeyUnknown", "error.config.keyUnknown"},
	{FileEmpty, "FileEmpty", "error.file.empty"},
	{FileTooLarge, "FileTooLarge", "error.file.tooLarge"},
	{FileExtNotAllowed, "FileExtNotAllowed", "error.file.extNotAllowed"},
	{FileNotFound, "FileNotFound", "error.file.notFound"},
	{ChunkMissing, "ChunkMissing", "error.file.chunkMissing"},
	{ChunkHashMismatch, "ChunkHashMismatch", "error.file.chunkHashMismatch"},
	{ChunkTooLarge, "ChunkTooLarge", "error.file.chunkTooLarge"},
	{UploadPendingExceeded, "UploadPendingExceeded", "error.file.pendingExceeded"},
	{NoticeNotFound, "NoticeNotFound", "error.notice.notFound"},
	{NoticeReceiverRequired, "NoticeReceiverRequired", "error.notice.receiverRequired"},
	{NoticeReceiverNotFound, "NoticeReceiverNotFound", "error.notice.receiverNotFound"},
	{NoticeActionInvalid, "NoticeActionInvalid", "error.notice.actionInvalid"},
	{NoticeOutOfDataScope, "NoticeOutOfDataScope", "error.notice.outOfDataScope"},
	{NoticeActionNotPermitted, "NoticeActionNotPermitted", "error.notice.actionNotPermitted"},
	{ExcelProviderMissing, "ExcelProviderMissing", "error.excel.providerMissing"},
	{ImportFileEmpty, "ImportFileEmpty", "error.import.fileEmpty"},
	{ImportRowLimitExceeded, "ImportRowLimitExceeded", "error.import.rowLimitExceeded"},
	{ImportColumnMissing, "ImportColumnMissing", "error.import.columnMissing"},
	{ImportCellRequired, "ImportCellRequired", "error.import.cellRequired"},
	{ImportCellDictInvalid, "ImportCellDictInvalid", "error.import.cellDictInvalid"},
	{ImportCellRefNotFound, "ImportCellRefNotFound", "error.import.cellRefNotFound"},
	{ImportCellFormatInvalid, "ImportCellFormatInvalid", "error.import.cellFormatInvalid"},
	{ImportDuplicateInFile, "ImportDuplicateInFile", "error.import.duplicateInFile"},
	{ImportDuplicateInDb, "ImportDuplicateInDb", "error.import.duplicateInDb"},
	{ImportOrgOutOfScope, "ImportOrgOutOfScope", "error.import.orgOutOfScope"},
	{ExportRowLimitExceeded, "ExportRowLimitExceeded", "error.export.tooManyRows"},
	{ExportColumnInvalid, "ExportColumnInvalid", "error.export.columnInvalid"},
	{ImportCellTooLarge, "ImportCellTooLarge", "error.import.cellTooLarge"},
	{ImportWorkbookTooLarge, "ImportWorkbookTooLarge", "error.import.workbookTooLarge"},
	{JobNotFound, "JobNotFound", "error.job.notFound"},
	{JobCodeExists, "JobCodeExists", "error.job.codeExists"},
	{JobCronInvalid, "JobCronInvalid", "error.job.cronInvalid"},
	{JobTriggerInvalid, "JobTriggerInvalid", "error.job.triggerInvalid"},
	{JobHandlerNotFound, "JobHandlerNotFound", "error.job.handlerNotFound"},
	{JobAlreadyRunning, "JobAlreadyRunning", "error.job.alreadyRunning"},
	{JobRunNotAlive, "JobRunNotAlive", "error.job.runNotAlive"},
	{JobSqlDisabled, "JobSqlDisabled", "error.job.sqlDisabled"},
	{JobHttpUrlBlocked, "JobHttpUrlBlocked", "error.job.httpUrlBlocked"},
	{JobStatusConflict, "JobStatusConflict", "error.job.statusConflict"},
	{JobPropsInvalid, "JobPropsInvalid", "error.job.propsInvalid"},
	{JobLogNotFound, "JobLogNotFound", "error.job.logNotFound"},
	{JobRunLimitReached, "JobRunLimitReached", "error.job.runLimitReached"},
	{JobProtected, "JobProtected", "error.job.protected"},
	{JobSystemBounds, "JobSystemBounds", "error.job.systemBounds"},
	{JobRetentionBelowFloor, "JobRetentionBelowFloor", "error.job.retentionBelowFloor"},
	{PageSizeExceeded, "PageSizeExceeded", "error.request.pageSizeExceeded"},
	{RequestInvalid, "RequestInvalid", "error.request.invalid"},
	{RouteNotFound, "RouteNotFound", "error.request.notFound"},
	{MethodNotAllowed, "MethodNotAllowed", "error.request.methodNotAllowed"},
	{BodyTooLarge, "BodyTooLarge", "error.request.bodyTooLarge"},
	{UnsupportedMediaType, "UnsupportedMediaType", "error.request.unsupportedMediaType"},
	{SystemError, "SystemError", "error.system.internal"},
	{StorageFull, "StorageFull", "error.system.storageFull"},
	{CacheUnavailable, "CacheUnavailable", "error.system.cacheUnavailable"},
	{DatabaseUnavailable, "DatabaseUnavailable", "error.system.databaseUnavailable"},
}}
