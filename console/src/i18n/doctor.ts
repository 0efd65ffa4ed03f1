// The provider setup doctor dialog's own strings (issue 29 item 6). The
// kernel's check messages and hints are msgKeys with their texts in the
// kernel's language packs (host/errcode/locales/*.json, kernelPacks in
// ./index.ts): one source for the kernel and the console.
export const doctor: Record<'en-US' | 'zh-CN', Record<string, string>> = {
  'en-US': {
    "doctor.button": "Check setup",
    "doctor.title": "Setup check: {code}",
    "doctor.running": "Checking…",
    "doctor.again": "Check again",
    "doctor.redirectUri": "Redirect URI",
    "doctor.trustedDomain": "Trusted domain",
    "doctor.check": "Check",
    "doctor.result": "Result",
    "doctor.message": "Finding",
    "doctor.result.ok": "OK",
    "doctor.result.warn": "Warning",
    "doctor.result.fail": "Failed",
    "doctor.summary.ok": "Every check passed.",
    "doctor.summary.warn": "Passed with warnings.",
    "doctor.summary.fail": "Some checks failed.",
  },
  'zh-CN': {
    "doctor.button": "诊断设置",
    "doctor.title": "设置诊断：{code}",
    "doctor.running": "正在检查…",
    "doctor.again": "重新检查",
    "doctor.redirectUri": "回调地址",
    "doctor.trustedDomain": "可信域名",
    "doctor.check": "检查项",
    "doctor.result": "结果",
    "doctor.message": "发现",
    "doctor.result.ok": "通过",
    "doctor.result.warn": "警告",
    "doctor.result.fail": "失败",
    "doctor.summary.ok": "全部检查通过。",
    "doctor.summary.warn": "通过，但有警告。",
    "doctor.summary.fail": "部分检查未通过。",
  },
}
