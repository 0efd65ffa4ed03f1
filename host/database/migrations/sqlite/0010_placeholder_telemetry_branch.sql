-- 0010 placeholder: NOT A MIGRATION. The telemetry branch was assigned 0011; this empty
-- file only keeps versions gap-free on that branch. Drop it when merging after the branch that owns 0010.
SELECT 1;
