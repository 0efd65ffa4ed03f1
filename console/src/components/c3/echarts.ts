// Apache ECharts, imported modularly (issue 25): only the chart types and
// components the workbench and the job monitor draw (line, bar, pie, the
// grid and the plain legend) with the canvas renderer, so the shared chart
// chunk stays small. No tooltip component: the charts print their values
// as labels and each page has the figures in a table; ECharts' HTML
// tooltip would also write style attributes through innerHTML, which the
// CSP (style-src 'self') refuses. The canvas and its container are styled
// through the CSSOM, which the CSP allows.
import { use, init, type ComposeOption, type ECharts } from 'echarts/core'
import { BarChart, LineChart, PieChart, type BarSeriesOption, type LineSeriesOption, type PieSeriesOption } from 'echarts/charts'
import { GridComponent, LegendPlainComponent, type GridComponentOption, type LegendComponentOption } from 'echarts/components'
import { CanvasRenderer } from 'echarts/renderers'

use([BarChart, LineChart, PieChart, GridComponent, LegendPlainComponent, CanvasRenderer])

export type ChartOption = ComposeOption<BarSeriesOption | LineSeriesOption | PieSeriesOption | GridComponentOption | LegendComponentOption>

export { init, type ECharts }

/** Colours with at least 3:1 contrast on white (WCAG non-text contrast). */
export const palette = ['#1d63d8', '#2a7a18', '#c62828', '#8a5300', '#6b3fa0', '#3f4450']
