// Texts of the business module's workbench (menu 110, dashboard/biz).
export const biz: Record<'en-US' | 'zh-CN', Record<string, string>> = {
  'en-US': {
    'biz.title': 'Workbench',
    'biz.quick': 'Quick menus',
    'biz.noQuick': 'This module has no other pages for you.',
    'biz.modules': 'Other modules',
    'biz.notices': 'My latest notices',
    'biz.noNotices': 'No notices.',
    'biz.unread': 'Unread',
  },
  'zh-CN': {
    'biz.title': '工作台',
    'biz.quick': '快捷菜单',
    'biz.noQuick': '本模块没有其他可用页面。',
    'biz.modules': '其他模块',
    'biz.notices': '我的最新通知',
    'biz.noNotices': '暂无通知。',
    'biz.unread': '未读',
  },
}
