-- 0017 job_bodies: the contract's job bodies: sys_job.http_success_statuses, alert_emails, number_of_runs, number_of_errors; sys_job_log.retry_index.
-- (ent's Schema.WriteTo against an empty Sqlite database with migrations 1-16 applied, which rebuilds both tables because ent hands Atlas every default as an expression; written as the equivalent ADD COLUMN statements, as 0015, so the rows stay in place and the file is expand. TestMigrationFilesMatchEntSchema checks that ent finds nothing left to change.)
-- adminkernel:expand
ALTER TABLE `sys_job` ADD COLUMN `http_success_statuses` text NULL;
ALTER TABLE `sys_job` ADD COLUMN `alert_emails` text NULL;
ALTER TABLE `sys_job` ADD COLUMN `number_of_runs` integer NOT NULL DEFAULT (0);
ALTER TABLE `sys_job` ADD COLUMN `number_of_errors` integer NOT NULL DEFAULT (0);
ALTER TABLE `sys_job_log` ADD COLUMN `retry_index` integer NOT NULL DEFAULT (0);
