// The stock dashboard page (menu component inventory/dashboard/index): an
// ES module whose default export is the page's Vue component.
export { default } from './DashboardPage.vue'
