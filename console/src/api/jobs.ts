// The scheduled-job endpoints (/sys/job, wire contract §4.11, docs/developers/jobs.md)
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

/** JobInput (POST /sys/job, PUT /sys/job/{id}: a full replace). The
 * console sends the kernel's field names (httpUrl, httpHeaders, runAt, ...),
 * which the kernel accepts beside the contract's `properties` bag and
 * `oneShotTime` (docs/developers/jobs.md, "Bodies"). Header values read back masked
 * (`********`); sending a masked value keeps the stored one. */
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
  httpSuccessStatuses?: string | null
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
  alertEmails?: string | null
  remark?: string | null
  startTime?: string | null
  endTime?: string | null
}

/** SysJob: the input plus the scheduler's state (the contract's names and
 * the kernel's earlier ones). */
export interface Job extends JobInput {
  id: number
  createTime: string
  status: number
  isSystem: boolean
  /** The property bag as JSON (header values masked). */
  propsJson?: string | null
  oneShotTime?: string | null
  nextRunTime?: string | null
  lastRunTime?: string | null
  numberOfRuns: number
  numberOfErrors: number
  consecutiveErrors: number
  nextFireTime?: string | null
  lastFireTime?: string | null
  lastRunStatus?: number | null
}

/** FireMode of a run (1 Schedule, 2 Manual, 3 Misfire, 4 MissedSkipped). */
export const FireMode = { Schedule: 1, Manual: 2, Misfire: 3, MissedSkipped: 4 } as const

/** SysJobLog: one firing. */
export interface JobLog {
  id: number
  jobId: number
  jobName: string
  fireInstanceId: string
  retryIndex: number
  fireMode: number
  scheduledTime: string
  runStatus: number
  startTime: string
  /** Empty while the run runs. */
  endTime?: string | null
  /** 0 while the run runs. */
  elapsedMs: number
  nodeName: string
  killRequested: boolean
  messageText?: string | null
  errorText?: string | null
  createTime: string
  // The kernel's earlier names of the same values.
  fireTime: string
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
  todaySuccess: number
  todayFailed: number
  totalJobs: number
  statusCounts: Record<'Ready' | 'Paused' | 'Completed' | 'Panic', number>
  trend: { date: string; success: number; failed: number }[]
  upcoming: { jobId: number; name: string; nextRunTime: string }[]
  nodes: { nodeName: string; hostName: string; isLeader: boolean; lastHeartbeat: string; workerId: number; pid: number }[]
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
  /** true once the run started (its row is in the run log). */
  run: (id: number) => api.post<boolean>(`/api/v1/sys/job/${id}/run`),
  previewCron: (cron: string, timeZone?: string | null, count = 5) => api.post<CronPreview>('/api/v1/sys/job/preview-cron', { cron, count, timeZone: timeZone || null }),
  /** The contract's handler names, and the kernel's details of each. */
  handlers: () => api.get<{ handlers: string[]; sqlEnabled: boolean; details?: JobHandler[] }>('/api/v1/sys/job/handlers'),
  logs: (p: { Current: number; Size: number; JobId?: number | ''; RunStatus?: number | ''; StartFrom?: string; StartTo?: string; FireInstanceId?: string }) =>
    api.get<Paged<JobLog>>(`/api/v1/sys/job/log/page${query(p)}`),
  kill: (logId: number) => api.post<boolean>(`/api/v1/sys/job/log/${logId}/kill`),
  clear: (b: { beforeDays?: number | null; jobId?: number | null }) => api.post<number>('/api/v1/sys/job/log/clear', b),
  dashboard: () => api.get<JobDashboard>('/api/v1/sys/job/dashboard'),
  summary: () => api.get<Summary>('/api/v1/dashboard/summary'),
}
