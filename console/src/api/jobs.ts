// The scheduled-job endpoints (/sys/job, wire contract §4.11, docs/jobs.md)
// and the workbench summary (/dashboard/summary, §4.10) the job pages and
// the workbench call (issue 25). Every call goes through the shared client:
// the +R routes (add, update, delete, batch-delete, run) replay after the
// ReauthDialog on 403/40024.
import { api } from '@/api'
import { query, type Paged } from '@/api/admin'

export const HandlerKind = { Compiled: 1, Http: 2, Sql: 3 } as const
export const TriggerKind = { Cron: 1, Interval: 2, OneShot: 3 } as const
export const JobStatus = { Ready: 1, Paused: 2, Completed: 3, Panic: 4 } as const
export const RunStatus = { Running: 1, Success: 2, Failed: 3, Timeout: 4, Cancelled: 5, Skipped: 6 } as const

/** JobInput (POST /sys/job, PUT /sys/job/{id}: a full replace). */
export interface JobInput {
  code: string
  name: string
  handlerKind: number
  handlerName: string
  handlerParam?: string | null
  httpUrl?: string | null
  httpMethod?: string | null
  httpBody?: string | null
  httpHeaders?: string | null
  sql?: string | null
  triggerKind: number
  cronExpression?: string | null
  intervalSeconds?: number | null
  runAt?: string | null
  timeZone?: string | null
  misfireStrategy: number
  concurrencyMode: number
  timeoutSeconds: number
  retryCount: number
  retryIntervalSeconds: number
  failAlertThreshold: number
  alertByNotice: boolean
  remark?: string | null
  startTime?: string | null
  endTime?: string | null
}

/** SysJob: the input plus the scheduler's state. */
export interface Job extends JobInput {
  id: number
  createTime: string
  status: number
  isSystem: boolean
  nextFireTime?: string | null
  lastFireTime?: string | null
  lastRunStatus?: number | null
}

/** SysJobLog: one firing. */
export interface JobLog {
  id: number
  jobId: number
  jobName: string
  fireInstanceId: string
  runStatus: number
  fireTime: string
  startTime: string
  endTime?: string | null
  elapsedMs?: number | null
  output?: string | null
  errorMessage?: string | null
  instance: string
  triggeredBy: string
}

export interface JobHandler {
  name: string
  description?: string
  paramSchema?: string
}

export interface JobDashboard {
  jobTotal: number
  jobReady: number
  jobPaused: number
  jobOther: number
  running: number
  last24h: Record<'running' | 'success' | 'failed' | 'timeout' | 'cancelled' | 'skipped', number>
  recentFailed: JobLog[]
}

export interface CronPreview {
  normalized: string
  occurrences: string[]
  everySecondWarning: boolean
}

/** The workbench summary (GET /dashboard/summary). A figure is null when
 * the caller lacks its area's read code (users and sessions count within
 * the caller's data scope); trendDays is always there. */
export interface Summary {
  roles: number | null
  users: number | null
  perms: number | null
  onlineSessions: number | null
  trendDays: string[]
  trendLogins: number[] | null
  trendActiveUsers: number[] | null
}

export const jobs = {
  page: (p: { Current: number; Size: number; Name?: string; Status?: number | ''; HandlerKind?: number | '' }) => api.get<Paged<Job>>(`/api/v1/sys/job/page${query(p)}`),
  add: (b: JobInput) => api.post<number>('/api/v1/sys/job', b),
  update: (id: number, b: JobInput) => api.put<boolean>(`/api/v1/sys/job/${id}`, b),
  remove: (id: number) => api.del<boolean>(`/api/v1/sys/job/${id}`),
  batchDelete: (ids: number[]) => api.post<boolean>('/api/v1/sys/job/batch-delete', { ids }),
  setEnabled: (id: number, enabled: boolean) => api.put<boolean>(`/api/v1/sys/job/${id}/enabled${query({ enabled })}`),
  run: (id: number) => api.post<number>(`/api/v1/sys/job/${id}/run`),
  previewCron: (cron: string, timeZone?: string | null, count = 5) => api.post<CronPreview>('/api/v1/sys/job/preview-cron', { cron, count, timeZone: timeZone || null }),
  handlers: () => api.get<{ handlers: JobHandler[]; sqlEnabled: boolean }>('/api/v1/sys/job/handlers'),
  logs: (p: { Current: number; Size: number; JobId?: number | ''; RunStatus?: number | ''; StartFrom?: string; StartTo?: string; FireInstanceId?: string }) =>
    api.get<Paged<JobLog>>(`/api/v1/sys/job/log/page${query(p)}`),
  kill: (logId: number) => api.post<boolean>(`/api/v1/sys/job/log/${logId}/kill`),
  clear: (b: { beforeDays?: number | null; jobId?: number | null }) => api.post<number>('/api/v1/sys/job/log/clear', b),
  dashboard: () => api.get<JobDashboard>('/api/v1/sys/job/dashboard'),
  summary: () => api.get<Summary>('/api/v1/dashboard/summary'),
}
